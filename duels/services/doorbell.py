"""The step doorbell: channel-layer messages sent after the database already holds the news.

The database is the truth; a lost doorbell only delays a live view until its next poll, so a
channel layer that is down never fails the step that rang it.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from duels.models import Episode, Step

logger = logging.getLogger(__name__)


def step_data(*, episode: Episode, step: Step) -> dict[str, Any]:
    """Return a step's fields as in the exchange format."""
    return {
        "episode": str(episode.uuid),
        "index": step.index,
        "observation": step.observation,
        "reply": step.reply,
        "action": step.action,
        "reward": step.reward,
        "done": step.done,
        "success": step.success,
        "latency_ms": step.latency_ms,
        "input_tokens": step.input_tokens,
        "output_tokens": step.output_tokens,
        "format_error": step.format_error,
    }


def _groups(*, episode: Episode, duel_uuid: str | None, tournament_uuid: str | None) -> list[str]:
    groups = [f"episode.{episode.uuid}"]
    if duel_uuid:
        groups.append(f"duel.{duel_uuid}")
    if tournament_uuid:
        groups.append(f"tournament.{tournament_uuid}")
    return groups


def _ring(groups: list[str], message: dict[str, Any]) -> None:
    try:
        layer = get_channel_layer()
        if layer is None:
            return
        send = async_to_sync(layer.group_send)
        for group in groups:
            send(group, message)
    except Exception:  # the layer is only a doorbell; never fail the work that rang it
        logger.warning("doorbell %s to %s not delivered", message.get("type"), groups,
                       exc_info=True)


def doorbell_step_ready(
    *, episode: Episode, step: Step, duel_uuid: str | None, tournament_uuid: str | None
) -> None:
    """Ring `step.ready` for a step whose transaction has committed."""
    message = {
        "type": "step.ready",
        "episode": str(episode.uuid),
        "index": step.index,
        "data": step_data(episode=episode, step=step),
    }
    _ring(_groups(episode=episode, duel_uuid=duel_uuid, tournament_uuid=tournament_uuid), message)


def doorbell_episode_ended(
    *, episode: Episode, duel_uuid: str | None, tournament_uuid: str | None
) -> None:
    message = {"type": "episode.ended", "episode": str(episode.uuid), "status": episode.status}
    _ring(_groups(episode=episode, duel_uuid=duel_uuid, tournament_uuid=tournament_uuid), message)


def doorbell_duel_updated(*, duel_uuid: str, tournament_uuid: str | None) -> None:
    groups = [f"duel.{duel_uuid}"] + ([f"tournament.{tournament_uuid}"] if tournament_uuid else [])
    _ring(groups, {"type": "duel.updated", "duel": duel_uuid})


def doorbell_tournament_updated(*, tournament_uuid: str) -> None:
    _ring([f"tournament.{tournament_uuid}"],
          {"type": "tournament.updated", "tournament": tournament_uuid})
