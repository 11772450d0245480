"""A panel evaluation as the owner of its plays (duels/engine/owners.py) and as a kind of run the
stale sweep hands to a new driver (duels/engine/runs.py).

An evaluation's plays stop at their next step once it is cancelled or failed, and stop starting
model calls once its cost cap is spent; their cost is added to the evaluation. A play that ran
out of infrastructure tries is incomplete (never a result): the next `evaluate` plays it again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from django.db.models import F, Q

from duels.engine.costs import CostCapReached, cost_cap_check
from duels.engine.owners import EpisodeOwner, episode_owner_register
from duels.engine.runs import OpenRun, RunKind, run_kind_register
from duels.engine.shared_reads import SharedReads
from duels.models import Episode, Evaluation, Status

logger = logging.getLogger(__name__)

FRESH_SECONDS = 0.25
EVALUATION_DRIVE_TASK = "evaluation_drive"


def _read(evaluation_id: int) -> dict[str, Any] | None:
    return Evaluation.objects.filter(pk=evaluation_id).values("status", "cost",
                                                              "cost_cap").first()


_reads = SharedReads(read=_read, fresh_seconds=FRESH_SECONDS)


def evaluation_group(*, evaluation_uuid) -> str:
    """The channel-layer group a page following the evaluation joins: every play's end rings
    it."""
    return f"evaluation.{evaluation_uuid}"


def evaluation_state_read(*, evaluation_id: int) -> dict[str, Any] | None:
    return _reads.get(evaluation_id)


def evaluation_state_forget(*, evaluation_id: int | None = None) -> None:
    if evaluation_id is None:
        _reads.forget()
    else:
        _reads.forget(key=evaluation_id)


def evaluation_spend_check(*, spend: dict[str, Any]) -> None:
    cost_cap_check(spent=spend["cost"] or 0, cap=spend["cost_cap"],
                   scope="evaluation cost cap")


def evaluation_cap_reached(*, evaluation_id: int) -> str | None:
    """The message of the evaluation's spent cost cap, or None while it has money left."""
    state = evaluation_state_read(evaluation_id=evaluation_id)
    if state is None:
        return None
    try:
        evaluation_spend_check(spend=state)
    except CostCapReached as reached:
        return str(reached)
    return None


class EvaluationOwner(EpisodeOwner):
    key = "evaluation_id"
    noun = "evaluation"
    status_lookup = "evaluation__status"

    def state(self, *, owner_id: int) -> dict[str, Any] | None:
        return evaluation_state_read(evaluation_id=owner_id)

    def spend_check(self, *, state: dict[str, Any]) -> None:
        evaluation_spend_check(spend=state)

    def charge(self, *, episode: Episode, cost: float) -> None:
        if cost:
            Evaluation.objects.filter(pk=episode.evaluation_id).update(cost=F("cost") + cost)

    def charged(self, *, episode: Episode) -> None:
        evaluation_state_forget(evaluation_id=episode.evaluation_id)

    def groups(self, *, episode: Episode) -> list[str]:
        return [evaluation_group(evaluation_uuid=episode.evaluation.uuid)]

    def gave_up(self, *, episode: Episode, faults: int, error: str) -> None:
        logger.warning("evaluation %s: play %s left incomplete after %d infrastructure "
                       "fault(s): %s", episode.evaluation_id, episode.uuid, faults, error)


def _open_evaluations() -> Iterator[OpenRun]:
    for uuid, pk in Evaluation.objects.filter(status=Status.RUNNING).values_list("uuid", "pk"):
        yield OpenRun(uuid=str(uuid), episodes=Q(evaluation_id=pk), units=())


episode_owner_register(EvaluationOwner())
run_kind_register(RunKind(name="evaluation", task=EVALUATION_DRIVE_TASK,
                          kwarg="evaluation_uuid", open_runs=_open_evaluations))
