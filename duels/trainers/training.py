"""Training-data exports: environments with measured pass rates, and solver chat transcripts.

(a) One JSON object per environment: source, hints, measured pass rates (overall and per
solver, unhinted and hinted) and the joint model's difficulty and hint effect — for reinforcement
learning on environments.
(b) Solver episodes as OpenAI fine-tuning chats `{"messages": [...]}`, rebuilt with the very
prompts the solver saw (duels.players.prompts), filterable by success and condition.

Both stream: each is a merge of querysets ordered by the same key, so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Count, Q, QuerySet

from duels.exchange.export import CHUNK_SIZE
from duels.models import Condition, Environment, Episode, Hint, Player, Status, Step
from duels.models.environments import voided_after_play
from duels.players.actions import TEXT, TOOL, action_protocol
from duels.players.base import PlayerError
from duels.players.chat_completions import openai_messages
from duels.players.prompts import solver_messages


class _Groups:
    """Walk rows ordered by `key` alongside an ordered stream of keys (a merge join)."""

    def __init__(self, rows: Iterator[dict[str, Any]], key: str) -> None:
        self.rows = rows
        self.key = key
        self.head: dict[str, Any] | None = next(rows, None)

    def take(self, value: Any) -> list[dict[str, Any]]:
        group = []
        while self.head is not None and self.head[self.key] < value:
            self.head = next(self.rows, None)
        while self.head is not None and self.head[self.key] == value:
            group.append(self.head)
            self.head = next(self.rows, None)
        return group


def _rate(passed: int, total: int) -> float | None:
    return passed / total if total else None


def _rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    totals = {condition: [0, 0] for condition in Condition.values}
    for row in rows:
        totals[row["condition"]][0] += row["passed"]
        totals[row["condition"]][1] += row["n"]
    unhinted = _rate(*totals[Condition.UNHINTED])
    hinted = _rate(*totals[Condition.HINTED])
    return {
        "unhinted": unhinted,
        "hinted": hinted,
        "hint_gain": None if unhinted is None or hinted is None else hinted - unhinted,
        "episodes_unhinted": totals[Condition.UNHINTED][1],
        "episodes_hinted": totals[Condition.HINTED][1],
    }


# The joint model's estimates stored by the latest analytics refresh (logit scale).
ESTIMATE_FIELDS = tuple(f"estimate__{name}" for name in (
    "difficulty", "difficulty_low", "difficulty_high", "hint_effect", "hint_effect_low",
    "hint_effect_high", "field_setter_score", "episodes", "computed_at"))


def _estimate(row: dict[str, Any]) -> dict[str, Any] | None:
    """Difficulty b and hint effect γ with 95% intervals, or None before the first estimate."""
    if row["estimate__computed_at"] is None:
        return None
    values = {name.removeprefix("estimate__"): row[name] for name in ESTIMATE_FIELDS}
    values["computed_at"] = values["computed_at"].isoformat()
    return values


def training_environment_records(
    *, environments: QuerySet[Environment]
) -> Iterator[dict[str, Any]]:
    """One object per environment with hints and pass rates, overall and per solver; an
    environment voided after play is left out (nothing measured on it means anything)."""
    chosen = environments.exclude(voided_after_play()).values("pk")
    hints = _Groups(
        Hint.objects.filter(environment__in=chosen)
        .order_by("environment_id", "pk")
        .values("environment_id", "uuid", "text", "author__name")
        .iterator(chunk_size=CHUNK_SIZE),
        "environment_id",
    )
    results = _Groups(
        Episode.objects.filter(environment__in=chosen, status=Status.FINISHED)
        .values("environment_id", "solver__name", "condition")
        .annotate(n=Count("pk"), passed=Count("pk", filter=Q(success=True)))
        .order_by("environment_id", "solver__name", "condition")
        .iterator(chunk_size=CHUNK_SIZE),
        "environment_id",
    )
    rows = (
        Environment.objects.filter(pk__in=chosen)
        .order_by("pk")
        .values("pk", "uuid", "title", "author__name", "family", "status", "source", "max_steps",
                "estimate__training", *ESTIMATE_FIELDS)
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for row in rows:
        episode_rows = results.take(row["pk"])
        per_solver: dict[str, list[dict[str, Any]]] = {}
        for result in episode_rows:
            per_solver.setdefault(result["solver__name"], []).append(result)
        yield {
            "uuid": str(row["uuid"]),
            "title": row["title"],
            "author": row["author__name"],
            "family": row["family"],
            "status": row["status"],
            "max_steps": row["max_steps"],
            "source": row["source"],
            "hints": [
                {"uuid": str(hint["uuid"]), "author": hint["author__name"], "text": hint["text"]}
                for hint in hints.take(row["pk"])
            ],
            "pass_rates": {
                **_rates(episode_rows),
                "solvers": {name: _rates(group) for name, group in per_solver.items()},
            },
            "estimate": _estimate(row),
            # The design's training value, parts and figures (duels.analytics.training_value).
            "training": row["estimate__training"],
        }


def training_episodes(
    *, success: bool | None = None, condition: str | None = None
) -> QuerySet[Episode]:
    """Finished solver episodes with at least one action, optionally by success and condition;
    never an episode of an environment voided after play."""
    episodes = Episode.objects.filter(status=Status.FINISHED, steps__gt=0).exclude(
        voided_after_play("environment__"))
    if success is not None:
        episodes = episodes.filter(success=success)
    if condition:
        episodes = episodes.filter(condition=condition)
    return episodes


def _protocol(row: dict) -> str:
    """The action protocol of an episode's solver, as its player is configured now."""
    solver = Player(name=row["solver__name"], provider=row["solver__provider"],
                    params=row["solver__params"] or {})
    try:
        return action_protocol(solver)
    except PlayerError:
        return TEXT  # a misconfigured player played no tool-protocol episode


def training_chat_records(
    *, episodes: QuerySet[Episode], thinking: bool = False
) -> Iterator[dict[str, Any]]:
    """Each episode as the chat its solver had: system, observations (user), replies (assistant).

    With `thinking`, each assistant message that came with reasoning carries it as
    `reasoning_content` (the field OpenAI-compatible servers use); without, it is left out. A
    solver of the tool action protocol had its actions as `act` calls: its records carry them as
    OpenAI `tool_calls`, each answered by the next observation as a `tool` message.
    """
    chosen = episodes.values("pk")
    steps = _Groups(
        Step.objects.filter(episode__in=chosen)
        .order_by("episode_id", "index")
        .values("episode_id", "index", "observation", "reply", "thinking", "action",
                "format_error")
        .iterator(chunk_size=CHUNK_SIZE),
        "episode_id",
    )
    rows = (
        Episode.objects.filter(pk__in=chosen)
        .order_by("pk")
        .values("pk", "hint__text", "solver__name", "solver__provider", "solver__params")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for row in rows:
        turns = steps.take(row["pk"])
        if len(turns) < 2 or turns[0]["index"] != 0:
            continue  # no reset or no action stored: nothing to learn from
        protocol = _protocol(row)

        def called(turn: dict, protocol: str = protocol) -> str | None:
            return turn["action"] if protocol == TOOL and not turn["format_error"] else None

        # Step n holds the reply to the observation of step n-1 and the answer to it.
        history = [
            (turns[n - 1]["observation"], turns[n]["reply"], called(turns[n]))
            for n in range(1, len(turns) - 1)
        ]
        messages = solver_messages(
            hint=row["hint__text"], history=history, observation=turns[-2]["observation"],
            protocol=protocol,
        )
        last = {"role": "assistant", "content": turns[-1]["reply"]}
        if (action := called(turns[-1])) is not None:
            last["action"] = action
        messages.append(last)
        if protocol == TOOL:
            messages = openai_messages(messages)
        if thinking:
            replies = (message for message in messages if message["role"] == "assistant")
            for message, turn in zip(replies, turns[1:], strict=True):
                if turn["thinking"]:
                    message["reasoning_content"] = turn["thinking"]
        yield {"messages": messages}
