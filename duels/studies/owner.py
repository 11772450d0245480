"""The study as the owner of its field plays (duels/engine/owners.py) and as a kind of run the
stale sweep hands to a new driver (duels/engine/runs.py).

A study's episodes stop at their next step once it is cancelled or failed, and stop starting
model calls once its cost cap is spent; their cost is added to the study. An episode that ran out
of infrastructure tries stays an incomplete play (never a result) and the study goes on.
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
from duels.models import Episode, Status, Study, StudySlot

logger = logging.getLogger(__name__)

FRESH_SECONDS = 0.25
STUDY_DRIVE_TASK = "study_drive"


def _read(study_id: int) -> dict[str, Any] | None:
    return Study.objects.filter(pk=study_id).values("status", "cost", "cost_cap").first()


_reads = SharedReads(read=_read, fresh_seconds=FRESH_SECONDS)


def study_group(*, study_uuid) -> str:
    """The channel-layer group a study page joins: every field play's end rings it."""
    return f"study.{study_uuid}"


def study_state_read(*, study_id: int) -> dict[str, Any] | None:
    """The study's status, spend and cap: this process's read of the last FRESH_SECONDS."""
    return _reads.get(study_id)


def study_state_forget(*, study_id: int | None = None) -> None:
    """Drop this process's read of the study (of every study with none given)."""
    if study_id is None:
        _reads.forget()
    else:
        _reads.forget(key=study_id)


def study_spend_check(*, spend: dict[str, Any]) -> None:
    """Raise CostCapReached once the study's spend has reached its cap."""
    cost_cap_check(spent=spend["cost"] or 0, cap=spend["cost_cap"], scope="study cost cap")


def study_cap_reached(*, study_id: int) -> str | None:
    """The message of the study's spent cost cap (from this process's shared read), or None
    while it has money left or no cap."""
    state = study_state_read(study_id=study_id)
    if state is None:
        return None
    try:
        study_spend_check(spend=state)
    except CostCapReached as reached:
        return str(reached)
    return None


def study_charge(*, study_id: int, cost: float) -> None:
    """Add a model call's cost to the study."""
    if cost:
        Study.objects.filter(pk=study_id).update(cost=F("cost") + cost)


class StudyOwner(EpisodeOwner):
    key = "study_id"
    noun = "study"
    status_lookup = "study__status"

    def state(self, *, owner_id: int) -> dict[str, Any] | None:
        return study_state_read(study_id=owner_id)

    def spend_check(self, *, state: dict[str, Any]) -> None:
        study_spend_check(spend=state)

    def charge(self, *, episode: Episode, cost: float) -> None:
        study_charge(study_id=episode.study_id, cost=cost)

    def charged(self, *, episode: Episode) -> None:
        study_state_forget(study_id=episode.study_id)

    def groups(self, *, episode: Episode) -> list[str]:
        return [study_group(study_uuid=episode.study.uuid)]

    def gave_up(self, *, episode: Episode, faults: int, error: str) -> None:
        logger.warning("study %s: field play %s left incomplete after %d infrastructure "
                       "fault(s): %s", episode.study_id, episode.uuid, faults, error)


def _open_studies() -> Iterator[OpenRun]:
    for uuid, pk in Study.objects.filter(status=Status.RUNNING).values_list("uuid", "pk"):
        yield OpenRun(uuid=str(uuid), episodes=Q(study_id=pk),
                      units=((StudySlot, Q(study_id=pk)),))


episode_owner_register(StudyOwner())
run_kind_register(RunKind(name="study", task=STUDY_DRIVE_TASK, kwarg="study_uuid",
                          open_runs=_open_studies))
