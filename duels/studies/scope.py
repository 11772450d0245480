"""A study as a run of the engine's work loop (duels/engine/scopes.py).

Its units of authoring are its slots: a slot is claimable while its current version is to be
written (pending, or its lease expired, or its field play ended and a revision is due). Its
episodes are its field plays, claimed earliest revision first; each belongs to its slot, so
the slot goes on once its version's last play ends.
"""

from __future__ import annotations

import threading
from datetime import datetime

from django.db.models import Q, QuerySet
from django.utils import timezone

from duels.engine.faults import (
    fault_describe,
    fault_is_lasting,
    infra_gave_up_reason,
    infra_max_tries,
    infra_retry_at,
)
from duels.engine.leases import claimable_episodes, lease_claim
from duels.engine.scheduler import scope_drive
from duels.engine.scopes import Candidate, WorkScope
from duels.engine.workers import stop_on_signals
from duels.models import DONE_STATUSES, Episode, SlotPhase, Status, Study, StudySlot
from duels.studies.authoring import slot_author
from duels.studies.creation import study_cancel, study_fail, study_start
from duels.studies.field import (
    slot_lineage_end,
    slot_play_advance,
    study_finalize_if_complete,
    study_progress_refresh,
    study_slots_advance,
)
from duels.studies.figures_cache import study_figures_request
from duels.studies.owner import STUDY_DRIVE_TASK, study_cap_reached

# Claimable plays read per claim, earliest revision first.
CANDIDATES = 1000


def claimable_slots(*, now: datetime) -> Q:
    """Slots whose current version may be claimed for writing."""
    return (Q(phase=SlotPhase.AUTHORING, status__in=[Status.PENDING, Status.RUNNING])
            & (Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)))


class StudyScope(WorkScope):
    def __init__(self, *, study: Study) -> None:
        self.study = study

    def slots(self) -> QuerySet[StudySlot]:
        return StudySlot.objects.filter(study=self.study)

    def episodes(self) -> QuerySet[Episode]:
        return Episode.objects.filter(study=self.study)

    def lock(self) -> None:
        Study.objects.select_for_update().filter(pk=self.study.pk).first()

    def cancelled(self) -> bool:
        return Study.objects.filter(pk=self.study.pk, status__in=[
            Status.CANCELLED, Status.FAILED]).exists()

    def done(self) -> bool:
        return not self.slots().exclude(status__in=DONE_STATUSES).exists()

    def progress_refresh(self) -> None:
        study_progress_refresh(study=self.study)

    def finalize_finished(self) -> None:
        study_slots_advance(study=self.study)

    def finish(self) -> None:
        if study_finalize_if_complete(study=self.study):
            study_figures_request(study=self.study, delay_seconds=0)

    def authoring_candidates(self, *, now: datetime) -> QuerySet[StudySlot]:
        return self.slots().filter(claimable_slots(now=now)).order_by(
            "revision", "position", "pk")

    def authoring_held(self, *, now: datetime) -> QuerySet[StudySlot]:
        return self.slots().filter(phase=SlotPhase.AUTHORING, status=Status.RUNNING,
                                   lease_expires_at__gte=now).exclude(lease_owner="")

    def authoring_claim(self, *, unit_id: int, owner: str) -> bool:
        rows = StudySlot.objects.filter(claimable_slots(now=timezone.now()), pk=unit_id)
        return lease_claim(rows=rows, owner=owner)

    def author(self, *, unit_id: int, owner: str) -> None:
        slot_author(slot_id=unit_id, owner=owner)

    def authoring_cost_capped(self, *, unit_id: int, reason: str) -> None:
        # The study's cap is spent: nothing more of it may call a model.
        study_cancel(study=self.study, reason=reason)

    def authoring_impossible(self, *, unit_id: int, reason: str) -> None:
        study_fail(study=self.study, reason=reason)

    def authoring_infra_fault(self, *, unit_id: int, owner: str, error: BaseException) -> None:
        """Hand the slot back to be claimed after a backoff; out of tries (or for a lasting
        fault) the slot stops, failed and unscored, its last valid version final."""
        message = fault_describe(error)
        slot = StudySlot.objects.get(pk=unit_id)
        faults = slot.infra_faults + 1
        StudySlot.objects.filter(pk=unit_id).update(infra_faults=faults)
        if fault_is_lasting(error) or faults >= infra_max_tries():
            reason = infra_gave_up_reason(
                what=f"writing {slot.slot}", faults=faults, error=message,
                consequence="the slot's last valid version stays final")
            slot_lineage_end(slot=slot, note=reason, status=Status.FAILED)
            return
        StudySlot.objects.filter(pk=unit_id, status=Status.RUNNING, lease_owner=owner).update(
            error=message[:4000], lease_owner="", lease_expires_at=infra_retry_at(faults=faults))

    def episode_candidates(self, *, now: datetime) -> list[Candidate]:
        """The earliest revisions' claimable plays (at most CANDIDATES of them: a big study has
        thousands waiting, and the claim holds the database's write lock while it reads), each
        with its slot."""
        slots = {(author_id, name): pk for pk, author_id, name in
                 self.slots().values_list("pk", "author_id", "slot")}
        rows = (self.episodes().filter(claimable_episodes(now=now), study__status=Status.RUNNING)
                .order_by("environment__revision", "pk")
                .values_list("pk", "environment__author_id", "environment__slot",
                             "environment_id", "environment__revision", "status")[:CANDIDATES])
        return [(pk, slots.get((author_id, slot), 0), environment_id, revision, status)
                for pk, author_id, slot, environment_id, revision, status in rows]

    def work_ended(self, *, unit_id: int) -> None:
        capped = study_cap_reached(study_id=self.study.pk)
        if capped is not None:
            # Its cost cap is spent: the study stops at once, as its next call would.
            study_cancel(study=self.study, reason=capped)
            return
        slot_play_advance(slot_id=unit_id)


def study_drive(*, study: Study, stop: threading.Event | None = None) -> bool:
    """Work on the study in this process until it is done; False if stopped early."""
    study_start(study=study)
    study.refresh_from_db()
    if study.is_done:
        return True
    return scope_drive(scope=StudyScope(study=study), concurrency=study.concurrency, stop=stop)


def study_drive_in_worker(*, study_uuid: str) -> str:
    """Drive a study from a worker; hand it on to another worker if this one stops."""
    from duels.engine.queue import run_driver_enqueue

    study = Study.objects.filter(uuid=study_uuid).first()
    if study is None:
        return "missing"
    with stop_on_signals() as stop:
        done = study_drive(study=study, stop=stop)
    if not done and not Study.objects.get(pk=study.pk).is_done:
        run_driver_enqueue(task=STUDY_DRIVE_TASK, kwarg="study_uuid", run_uuid=study_uuid)
        return "handed on"
    return "done"
