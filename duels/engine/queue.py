"""The one place where engine work is put on the task queue.

The engine never imports `duels/tasks.py` (the tasks call the engine): it enqueues through
`duels.engine.task_registry`, where the tasks module registers each task by name.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from duels.engine.heartbeats import worker_dead_after
from duels.engine.leases import lease_seconds
from duels.engine.runs import run_kinds
from duels.engine.task_registry import task_named
from duels.models import Duel, Status, Tournament, WorkerHeartbeat

# How many workers may drive one tournament at once (each runs its own claimed work).
TOURNAMENT_DRIVERS = 2


def tournament_driver_enqueue(*, tournament_uuid: str) -> None:
    """Queue one driver for the tournament now."""
    task_named("tournament_drive").enqueue(tournament_uuid=tournament_uuid)


def duel_driver_enqueue(*, duel_uuid: str) -> None:
    """Queue one driver for a duel outside any tournament now."""
    task_named("duel_drive").enqueue(duel_uuid=duel_uuid)


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


def run_driver_enqueue(*, task: str, kwarg: str, run_uuid: str) -> None:
    """Queue one driver of a registered kind of run (duels/engine/runs.py) now."""
    task_named(task).enqueue(**{kwarg: run_uuid})


def queued_drivers() -> set[str]:
    """UUIDs of tournaments, duels and runs of other kinds (studies …) that already have a
    driver task waiting in the queue, or running on a worker whose heartbeat is live (a dead
    worker's rows are reaped; a worker without heartbeats, a bare db_worker, is not trusted to
    be alive)."""
    from django_tasks_db.models import DBTaskResult

    live = set(WorkerHeartbeat.objects.filter(
        last_seen_at__gte=timezone.now() - worker_dead_after()).values_list("worker_id",
                                                                             flat=True))
    kinds = run_kinds()
    names = ["tournament_drive", "duel_drive", *(kind.task for kind in kinds)]
    driver_paths = [task_named(name).module_path for name in names]
    kwargs_names = ["tournament_uuid", "duel_uuid", *(kind.kwarg for kind in kinds)]
    rows = DBTaskResult.objects.filter(
        task_path__in=driver_paths, status__in=["READY", "RUNNING"],
    ).values_list("status", "worker_ids", "args_kwargs")
    kwargs = ((row or {}).get("kwargs", {}) for status, workers, row in rows
              if status == "READY" or (workers and workers[-1] in live))
    return {str(next((k[name] for name in kwargs_names if k.get(name)), None))
            for k in kwargs}


def stale_sweep_schedule() -> bool:
    """Make sure one sweep is queued to run a lease from now; False if one already is."""
    from django_tasks_db.models import DBTaskResult

    sweep = task_named("stale_work_sweep")
    if DBTaskResult.objects.filter(task_path=sweep.module_path, status="READY").exists():
        return False
    run_after = timezone.now() + timedelta(seconds=lease_seconds())
    sweep.using(run_after=run_after).enqueue()
    return True
