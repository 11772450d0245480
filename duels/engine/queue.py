"""The one place where engine work is put on the task queue.

`duels/tasks.py` calls into the engine and the engine enqueues tasks, so the two import each other;
the circle is kept to this module (and its imports of `duels.tasks` are made when called).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.utils import timezone

from duels.engine.leases import lease_seconds
from duels.engine.worker_registry import worker_dead_after
from duels.models import Duel, Status, Tournament, WorkerHeartbeat

SWEEP_TASK_PATH = "duels.tasks.stale_work_sweep_task"
DRIVER_TASK_PATHS = ("duels.tasks.tournament_drive_task", "duels.tasks.duel_drive_task")
# How many workers may drive one tournament at once (each runs its own claimed work).
TOURNAMENT_DRIVERS = 2
# Refresh requests within this many seconds of each other share one analytics refresh.
DEBOUNCE_SECONDS = 10

logger = logging.getLogger(__name__)


def tournament_driver_enqueue(*, tournament_uuid: str) -> None:
    """Queue one driver for the tournament now."""
    from duels.tasks import tournament_drive_task

    tournament_drive_task.enqueue(tournament_uuid=tournament_uuid)


def duel_driver_enqueue(*, duel_uuid: str) -> None:
    """Queue one driver for a duel outside any tournament now."""
    from duels.tasks import duel_drive_task

    duel_drive_task.enqueue(duel_uuid=duel_uuid)


def tournament_enqueue(*, tournament: Tournament, drivers: int = TOURNAMENT_DRIVERS) -> None:
    """Mark the tournament running and hand it to up to `drivers` background workers."""
    Tournament.objects.filter(pk=tournament.pk, status=Status.PENDING).update(
        status=Status.RUNNING, started_at=timezone.now()
    )
    uuid = str(tournament.uuid)

    def enqueue() -> None:
        for _ in range(max(1, drivers)):
            tournament_driver_enqueue(tournament_uuid=uuid)
        stale_sweep_schedule()

    transaction.on_commit(enqueue)


def duel_enqueue(*, duel: Duel) -> None:
    """Hand the duel to the background workers."""
    def enqueue() -> None:
        duel_driver_enqueue(duel_uuid=str(duel.uuid))
        stale_sweep_schedule()

    transaction.on_commit(enqueue)


def queued_drivers() -> set[str]:
    """UUIDs of tournaments and duels that already have a driver task waiting in the queue, or
    running on a worker whose heartbeat is live (a dead worker's rows are reaped; a worker
    without heartbeats, a bare db_worker, is not trusted to be alive)."""
    from django_tasks_db.models import DBTaskResult

    live = set(WorkerHeartbeat.objects.filter(
        last_seen_at__gte=timezone.now() - worker_dead_after()).values_list("worker_id",
                                                                             flat=True))
    rows = DBTaskResult.objects.filter(
        task_path__in=DRIVER_TASK_PATHS, status__in=["READY", "RUNNING"],
    ).values_list("status", "worker_ids", "args_kwargs")
    kwargs = ((row or {}).get("kwargs", {}) for status, workers, row in rows
              if status == "READY" or (workers and workers[-1] in live))
    return {str(k.get("tournament_uuid") or k.get("duel_uuid")) for k in kwargs}


def stale_sweep_schedule() -> bool:
    """Make sure one sweep is queued to run a lease from now; False if one already is."""
    from django_tasks_db.models import DBTaskResult

    from duels.tasks import stale_work_sweep_task

    if DBTaskResult.objects.filter(task_path=SWEEP_TASK_PATH, status="READY").exists():
        return False
    run_after = timezone.now() + timedelta(seconds=lease_seconds())
    stale_work_sweep_task.using(run_after=run_after).enqueue()
    return True


def analytics_refresh_pending() -> bool:
    """True when a refresh task is queued and not yet started."""
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from duels.tasks import analytics_refresh_task

    return DBTaskResult.objects.filter(
        task_path=analytics_refresh_task.module_path, status=TaskResultStatus.READY
    ).exists()


def analytics_refresh_underway() -> set[str]:
    """The statuses (`READY` queued, `RUNNING`) of refresh tasks not yet done, in one query;
    empty when none is: while it is not, the analytics page keeps asking for new figures."""
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from duels.tasks import analytics_refresh_task

    return set(DBTaskResult.objects.filter(
        task_path=analytics_refresh_task.module_path,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
    ).order_by().values_list("status", flat=True).distinct())


def analytics_request_refresh(*, delay_seconds: float = DEBOUNCE_SECONDS) -> bool:
    """Queue a background refresh unless one is already waiting; True when one was queued.

    Never raises a database error to the caller (a finishing duel must not fail because the
    figures could not be queued); the next finished duel asks again.
    """
    from duels.tasks import analytics_refresh_task

    try:
        if analytics_refresh_pending():
            return False
        run_after = timezone.now() + timedelta(seconds=delay_seconds)
        analytics_refresh_task.using(run_after=run_after).enqueue()
    except DatabaseError:
        logger.exception("could not queue an analytics refresh")
        return False
    return True


def analytics_data_changed() -> bool:
    """Rows the figures are computed from changed (an import, a finished duel, a transfer
    upload): mark the snapshot stale and queue a background refresh. True when one was queued.

    Never raises a database error (the change itself must not fail because of the figures).
    """
    from duels.models import AnalyticsSnapshot

    try:
        AnalyticsSnapshot.objects.filter(stale=False).update(stale=True)
    except DatabaseError:
        logger.exception("could not mark the analytics snapshot stale")
    return analytics_request_refresh()
