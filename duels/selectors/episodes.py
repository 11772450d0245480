"""Reads about episodes: detail, the steps around a window, streaming batches, comparison."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from uuid import UUID

from django.db.models import Max, Q, QuerySet
from django.shortcuts import get_object_or_404

from duels.models import DONE_STATUSES, Condition, Episode, Step
from duels.models.episodes import step_is_format_reminder
from duels.selectors.episode_end import episode_end_summary
from duels.words.error_text import error_for_reader

# Step fields as in the exchange format (docs/exchange-format.md), in the order a client shows them.
STEP_FIELDS = (
    "index",
    "observation",
    "reply",
    "action",
    "reward",
    "done",
    "success",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "format_error",
    "thinking",
    "cache_read_tokens",
    "cache_write_tokens",
    "sandbox_ms",
    "cost",
)


def episode_get(*, episode_uuid: UUID) -> Episode:
    """One episode with everything its page header shows."""
    return get_object_or_404(
        Episode.objects.select_related(
            "environment", "environment__author", "solver", "hint", "duel", "duel__a", "duel__b",
            "study", "evaluation__panel",
        ),
        uuid=episode_uuid,
    )


def episode_steps_edges(*, episode: Episode, head: int = 5, tail: int = 5) -> dict:
    """The first `head` and last `tail` steps (two queries whatever the episode size)."""
    first = list(Step.objects.filter(episode=episode).order_by("index")[:head])
    last = list(Step.objects.filter(episode=episode).order_by("-index")[:tail])
    last.reverse()
    seen = {step.index for step in first}
    last = [step for step in last if step.index not in seen]
    hidden = 0
    if first and last:
        hidden = last[0].index - first[-1].index - 1
    return {"head": first, "tail": last, "hidden": max(hidden, 0)}


def episode_steps_window(*, episode: Episode, start: int, size: int = 20) -> list[Step]:
    """Steps `start .. start+size-1` (for reading a long episode page by page without JS)."""
    return list(Step.objects.filter(episode=episode, index__gte=start).order_by("index")[:size])


def episode_step(*, episode: Episode, index: int) -> Step | None:
    """One step of the episode, or None when it has no step with that index."""
    return Step.objects.filter(episode=episode, index=index).first()


def step_payload(step: Step | dict) -> dict:
    """A step's fields as in the exchange format (from a model or a `.values()` row)."""
    if isinstance(step, dict):
        return {name: step[name] for name in STEP_FIELDS}
    return {name: getattr(step, name) for name in STEP_FIELDS}


@dataclass(frozen=True)
class EpisodeState:
    """What a live viewer needs about an episode besides its steps."""

    pk: int
    uuid: str
    status: str
    success: bool | None
    end_reason: str
    error: str
    is_done: bool
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def status_message(self, *, staff: bool = False) -> dict:
        """The websocket's `episode.status` message; its error as this reader may read it
        (duels/words/error_text.py: whole for staff only)."""
        error = error_for_reader(self.error, staff=staff)
        return {
            "type": "episode.status",
            "episode": self.uuid,
            "status": self.status,
            "success": self.success,
            "end_reason": self.end_reason,
            "error": error,
            "steps": self.steps,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "end": episode_end_summary(
                status=self.status,
                success=self.success,
                end_reason=self.end_reason,
                error=error,
                steps=self.steps,
            ),
        }


def episode_state(*, episode_uuid: UUID | str) -> EpisodeState | None:
    """The episode's status fields, or None when there is no such episode."""
    row = (
        Episode.objects.filter(uuid=episode_uuid)
        .values(
            "pk", "uuid", "status", "success", "end_reason", "error",
            "steps", "input_tokens", "output_tokens", "cost",
        )
        .first()
    )
    if row is None:
        return None
    episode = Episode(status=row["status"])
    return EpisodeState(
        pk=row["pk"],
        uuid=str(row["uuid"]),
        status=row["status"],
        success=row["success"],
        end_reason=row["end_reason"],
        error=row["error"],
        is_done=episode.is_done,
        steps=row["steps"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cost=float(row["cost"] or 0.0),
    )


def episode_steps_after(*, episode_pk: int, since: int, limit: int = 500) -> list[dict]:
    """Up to `limit` step payloads with index > `since`, oldest first (plain rows, fast)."""
    rows = (
        Step.objects.filter(episode_id=episode_pk, index__gt=since)
        .order_by("index")
        .values_list(*STEP_FIELDS)[:limit]
    )
    return [dict(zip(STEP_FIELDS, row, strict=True)) for row in rows]


def episode_counterpart(*, episode: Episode) -> Episode | None:
    """The same environment, solver and seed in the other condition (same duel, study or
    evaluation first)."""
    other = Condition.UNHINTED if episode.hinted else Condition.HINTED
    candidates = Episode.objects.select_related("environment__author", "solver", "hint").filter(
        environment_id=episode.environment_id,
        solver_id=episode.solver_id,
        seed=episode.seed,
        condition=other,
    )
    for run in ("duel_id", "study_id", "evaluation_id"):
        if getattr(episode, run):
            in_run = candidates.filter(**{run: getattr(episode, run)}).first()
            if in_run:
                return in_run
    return candidates.order_by("-created_at", "-pk").first()


def episode_siblings(*, episode: Episode) -> QuerySet[Episode]:
    """Every episode on the same environment (for the compare view's seed/solver picker)."""
    return (
        Episode.objects.filter(environment_id=episode.environment_id)
        .select_related("solver")
        .order_by("solver__name", "seed", "condition", "pk")
    )


COMPARE_STEP_LIMIT = 2000


def episode_compare(*, left: Episode, right: Episode, limit: int = COMPARE_STEP_LIMIT) -> dict:
    """Two episodes' steps aligned by index, with the first index where they diverge.

    Steps diverge at the first index whose action or observation differs, or where only one
    episode has a step. Rows past `limit` are not loaded (`truncated` says so).
    """

    def load(episode: Episode) -> dict[int, dict]:
        rows = episode_steps_after(episode_pk=episode.pk, since=-1, limit=limit + 1)
        for row in rows:
            row["is_format_reminder"] = step_is_format_reminder(
                format_error=row["format_error"], action=row["action"])
        return {row["index"]: row for row in rows}

    left_steps, right_steps = load(left), load(right)
    indices = sorted(set(left_steps) | set(right_steps))
    truncated = len(indices) > limit
    rows = []
    divergence = None
    for index in indices[:limit]:
        a, b = left_steps.get(index), right_steps.get(index)
        differs = (
            a is None
            or b is None
            or a["action"] != b["action"]
            or a["observation"] != b["observation"]
        )
        if differs and divergence is None:
            divergence = index
        action_differs = a is not None and b is not None and a["action"] != b["action"]
        left_parts, right_parts = (
            action_diff(left=a["action"], right=b["action"]) if action_differs else (None, None)
        )
        rows.append(
            {
                "index": index,
                "left": a,
                "right": b,
                "differs": differs,
                "action_differs": action_differs,
                "left_action_parts": left_parts,
                "right_action_parts": right_parts,
                "first_divergence": divergence == index,
            }
        )
    return {"rows": rows, "divergence": divergence, "truncated": truncated}


def action_diff(*, left: str, right: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both actions as word-level parts `(text, differs)`: only what changed is marked."""
    left_words = re.split(r"(\s+)", left)
    right_words = re.split(r"(\s+)", right)
    left_parts: list[tuple[str, bool]] = []
    right_parts: list[tuple[str, bool]] = []
    matcher = SequenceMatcher(a=left_words, b=right_words, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            left_parts.append(("".join(left_words[i1:i2]), tag != "equal"))
        if j2 > j1:
            right_parts.append(("".join(right_words[j1:j2]), tag != "equal"))
    return left_parts, right_parts


def episode_recent_pairs(*, limit: int = 12) -> list[dict]:
    """The latest unhinted/hinted pairs (same duel, study or evaluation, environment, solver
    and seed),
    newest first, for the compare page's "what to pick" list. Two queries."""
    hinted = (
        Episode.objects.filter(Q(duel__isnull=False) | Q(study__isnull=False)
                               | Q(evaluation__isnull=False), condition=Condition.HINTED)
        .select_related("environment", "solver", "duel__a", "duel__b", "study",
                        "evaluation__panel")
        .order_by("-created_at", "-pk")[:limit]
    )
    hinted = list(hinted)
    keys = {(e.duel_id, e.study_id, e.evaluation_id, e.environment_id, e.solver_id, e.seed): e
            for e in hinted}
    unhinted = Episode.objects.filter(
        condition=Condition.UNHINTED,
        environment_id__in={e.environment_id for e in hinted},
        solver_id__in={e.solver_id for e in hinted},
    )
    pairs = {}
    for episode in unhinted:
        key = (episode.duel_id, episode.study_id, episode.evaluation_id, episode.environment_id,
               episode.solver_id, episode.seed)
        if key in keys:
            pairs[key] = episode
    return [
        {"unhinted": pairs[key], "hinted": keys[key]} for key in keys if key in pairs
    ]


def episodes_progress(*, episode_pks: list[int]) -> dict[int, tuple[bool, int]]:
    """For each episode: (ended, highest stored step index or -1), in two queries whatever the
    number of episodes. Statuses are read first, so an ended episode's steps are all counted."""
    ended = {pk: status in DONE_STATUSES for pk, status in Episode.objects.filter(
        pk__in=episode_pks).values_list("pk", "status")}
    last = dict(Step.objects.filter(episode_id__in=list(ended)).values("episode_id")
                .annotate(last=Max("index")).values_list("episode_id", "last"))
    return {pk: (done, last.get(pk, -1)) for pk, done in ended.items()}
