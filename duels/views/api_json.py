"""How each object looks in the read API: one function per kind, plain JSON types only.

Long step texts are bounded (head and tail around a marker) so a page stays a few MB at most.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist

from duels.bounds import API_TEXT_CHARS, text_bound
from duels.exchange.export import PLAYER_SERVER_FIELDS, iso_time
from duels.models import Annotation, Duel, Environment, Episode, Player
from duels.words.error_text import error_for_reader


def _ref(obj: Any) -> str | None:
    return None if obj is None else str(obj.uuid)


def _named(player: Player | None) -> dict[str, str] | None:
    return None if player is None else {"uuid": str(player.uuid), "name": player.name}


def player_json(player: Player, *, staff: bool = False) -> dict[str, Any]:
    data = {
        "uuid": str(player.uuid), "name": player.name, "provider": player.provider,
        "model": player.model, "base_url": player.base_url, "api_key_env": player.api_key_env,
        "params": player.params, "price_in": player.price_in, "price_out": player.price_out,
        "price_cached_in": player.price_cached_in, "price_cache_write": player.price_cache_write,
        "builtin": player.builtin, "imported": player.imported,
        "parameters_b": player.parameters_b,
        "description": player.description, "created_at": iso_time(player.created_at),
    }
    if not staff:
        for field in PLAYER_SERVER_FIELDS:  # staff only, as in the download files
            del data[field]
    return data


def environment_training_json(environment: Environment) -> dict[str, Any] | None:
    """The design's training value, its parts and figures (duels.analytics.training_value), or
    None before the latest analytics refresh saw the environment played."""
    try:
        training = environment.estimate.training
    except ObjectDoesNotExist:
        return None
    return training or None


def environment_json(environment: Environment, *, detail: bool = False) -> dict[str, Any]:
    data = {
        "uuid": str(environment.uuid), "title": environment.title,
        "author": _named(environment.author), "family": environment.family,
        "status": environment.status, "content_hash": environment.content_hash,
        "max_steps": environment.max_steps, "created_at": iso_time(environment.created_at),
        "hints": [
            {"uuid": str(hint.uuid), "author": _named(hint.author), "text": hint.text}
            for hint in environment.hints.all()
        ],
        "training": environment_training_json(environment),
    }
    if detail:
        data["source"] = environment.source
        data["validation"] = environment.validation
    return data


def duel_json(duel: Duel, *, staff: bool = False) -> dict[str, Any]:
    def side(name: str) -> dict[str, Any]:
        return {
            "p_unhinted": getattr(duel, f"p_unhinted_{name}"),
            "p_hinted": getattr(duel, f"p_hinted_{name}"),
            "hint_gain": getattr(duel, f"hint_gain_{name}"),
            "setter_score": getattr(duel, f"setter_score_{name}"),
            "flips": getattr(duel, f"flips_{name}"),
            "forfeit_reason": getattr(duel, f"forfeit_{name}") or None,
            "voided": bool(getattr(duel, f"void_{name}")),
            "void_reason": getattr(duel, f"void_{name}") or None,
        }

    return {
        "uuid": str(duel.uuid), "tournament": _ref(duel.tournament),
        "a": _named(duel.a), "b": _named(duel.b),
        "env_a": _ref(duel.env_a), "env_b": _ref(duel.env_b),
        "hint_a": _ref(duel.hint_a), "hint_b": _ref(duel.hint_b),
        "attempts": duel.attempts, "observe": duel.observe, "status": duel.status,
        "outcome": duel.outcome, "sides": {"a": side("a"), "b": side("b")}, "cost": duel.cost,
        "prompt_version": duel.prompt_version,
        "error": error_for_reader(duel.error, staff=staff),
        "created_at": iso_time(duel.created_at), "started_at": iso_time(duel.started_at),
        "finished_at": iso_time(duel.finished_at),
    }


def episode_json(episode: Episode, *, staff: bool = False) -> dict[str, Any]:
    return {
        "uuid": str(episode.uuid), "duel": _ref(episode.duel),
        "environment": _ref(episode.environment), "hint": _ref(episode.hint),
        "condition": episode.condition, "solver": _named(episode.solver), "seed": episode.seed,
        "status": episode.status, "end_reason": episode.end_reason or None,
        "success": episode.success, "steps": episode.steps,
        "input_tokens": episode.input_tokens, "output_tokens": episode.output_tokens,
        "cache_read_tokens": episode.cache_read_tokens,
        "cache_write_tokens": episode.cache_write_tokens,
        "cost": episode.cost, "sandbox_backend": episode.sandbox_backend,
        "prompt_version": episode.prompt_version,
        "error": error_for_reader(episode.error, staff=staff),
        "started_at": iso_time(episode.started_at), "finished_at": iso_time(episode.finished_at),
    }


def step_json(step: Any) -> dict[str, Any]:
    return {
        # Each text is bounded (head and tail around a marker) so a page stays a few MB at most.
        "index": step.index, "observation": text_bound(step.observation, limit=API_TEXT_CHARS),
        "reply": text_bound(step.reply, limit=API_TEXT_CHARS), "action": step.action,
        "reward": step.reward, "done": step.done,
        "success": step.success, "latency_ms": step.latency_ms,
        "input_tokens": step.input_tokens, "output_tokens": step.output_tokens,
        "format_error": step.format_error,
        "thinking": text_bound(step.thinking, limit=API_TEXT_CHARS),
        "cache_read_tokens": step.cache_read_tokens, "cache_write_tokens": step.cache_write_tokens,
    }


def annotation_json(note: Annotation) -> dict[str, Any]:
    return {
        "uuid": str(note.uuid), "target_kind": note.target_kind,
        "target": _ref(note.environment or note.episode), "index": note.step_index,
        "author": note.author.get_username(), "tags": note.tags, "rating": note.rating,
        "text": note.text, "line_start": note.line_start, "line_end": note.line_end,
        "created_at": iso_time(note.created_at), "updated_at": iso_time(note.updated_at),
    }
