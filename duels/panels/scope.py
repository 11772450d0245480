"""A panel evaluation as a run of the engine's work loop (duels/engine/scopes.py).

An evaluation authors nothing: its panel is frozen. Its episodes are its plays, claimed in the
panel's order; the evaluation itself is the one unit they belong to, and it ends once every
play has.
"""

from __future__ import annotations

import threading
from datetime import datetime

from django.db.models import QuerySet

from duels.engine.leases import claimable_episodes
from duels.engine.scheduler import scope_drive
from duels.engine.scopes import Candidate, WorkScope
from duels.engine.workers import stop_on_signals
from duels.models import DONE_STATUSES, Episode, Evaluation, PanelEntry, Status
from duels.panels.evaluation import evaluation_cancel, evaluation_finalize_if_complete
from duels.panels.figures_cache import panel_figures_request
from duels.panels.owner import EVALUATION_DRIVE_TASK, evaluation_cap_reached

CANDIDATES = 1000  # claimable plays read per claim


class EvaluationScope(WorkScope):
    def __init__(self, *, evaluation: Evaluation) -> None:
        self.evaluation = evaluation

    def episodes(self) -> QuerySet[Episode]:
        return Episode.objects.filter(evaluation=self.evaluation)

    def lock(self) -> None:
        Evaluation.objects.select_for_update().filter(pk=self.evaluation.pk).first()

    def cancelled(self) -> bool:
        return Evaluation.objects.filter(pk=self.evaluation.pk, status__in=[
            Status.CANCELLED, Status.FAILED]).exists()

    def done(self) -> bool:
        return not self.episodes().exclude(status__in=DONE_STATUSES).exists()

    def finish(self) -> None:
        if evaluation_finalize_if_complete(evaluation=self.evaluation):
            panel_figures_request(panel=self.evaluation.panel, delay_seconds=0)

    # Nothing to author: the panel's versions were written when it was made.
    def authoring_candidates(self, *, now: datetime) -> QuerySet[Evaluation]:
        return Evaluation.objects.none()

    def authoring_held(self, *, now: datetime) -> QuerySet[Evaluation]:
        return Evaluation.objects.none()

    def authoring_claim(self, *, unit_id: int, owner: str) -> bool:
        return False

    def author(self, *, unit_id: int, owner: str) -> None:
        raise AssertionError("an evaluation authors nothing")

    def authoring_cost_capped(self, *, unit_id: int, reason: str) -> None:
        evaluation_cancel(evaluation=self.evaluation, reason=reason)

    def authoring_impossible(self, *, unit_id: int, reason: str) -> None:
        evaluation_cancel(evaluation=self.evaluation, reason=reason)

    def authoring_infra_fault(self, *, unit_id: int, owner: str, error: BaseException) -> None:
        raise AssertionError("an evaluation authors nothing")

    def episode_candidates(self, *, now: datetime) -> list[Candidate]:
        """Claimable plays in the panel's order (its first versions first), at most
        CANDIDATES of them."""
        positions = dict(PanelEntry.objects.filter(panel_id=self.evaluation.panel_id)
                         .values_list("environment_id", "position"))
        rows = (self.episodes().filter(claimable_episodes(now=now),
                                       evaluation__status=Status.RUNNING)
                .order_by("pk").values_list("pk", "environment_id", "status")[:CANDIDATES])
        return [(pk, self.evaluation.pk, environment_id, positions.get(environment_id, 0),
                 status) for pk, environment_id, status in rows]

    def work_ended(self, *, unit_id: int) -> None:
        capped = evaluation_cap_reached(evaluation_id=self.evaluation.pk)
        if capped is not None:
            # Its cost cap is spent: the evaluation stops at once, as its next call would.
            evaluation_cancel(evaluation=self.evaluation, reason=capped)


def evaluation_drive(*, evaluation: Evaluation, stop: threading.Event | None = None) -> bool:
    """Play the evaluation in this process until every play ended; False if stopped early."""
    evaluation.refresh_from_db()
    if evaluation.status != Status.RUNNING:
        return True
    return scope_drive(scope=EvaluationScope(evaluation=evaluation),
                       concurrency=evaluation.concurrency, stop=stop)


def evaluation_drive_in_worker(*, evaluation_uuid: str) -> str:
    """Drive an evaluation from a worker; hand it on to another worker if this one stops."""
    from duels.engine.queue import run_driver_enqueue

    evaluation = Evaluation.objects.filter(uuid=evaluation_uuid).first()
    if evaluation is None:
        return "missing"
    with stop_on_signals() as stop:
        done = evaluation_drive(evaluation=evaluation, stop=stop)
    if not done and not Evaluation.objects.get(pk=evaluation.pk).is_done:
        run_driver_enqueue(task=EVALUATION_DRIVE_TASK, kwarg="evaluation_uuid",
                           run_uuid=evaluation_uuid)
        return "handed on"
    return "done"
