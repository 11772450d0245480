"""Which task workers are alive, and reaping the task rows of those that died.

Each supervisor (`manage.py worker`, `manage.py serve`) renews a heartbeat row per worker process
every `heartbeat_seconds()` (`duels/engine/heartbeats.py`). A worker whose row has not moved for
`DEAD_AFTER_BEATS` beats is dead (its machine crashed or its supervisor was SIGKILLed):
django_tasks_db would keep its task rows RUNNING forever, so they are marked FAILED with the
reason here, and the engine's own recovery (leases and the stale-work sweep) hands the duels
and episodes to live workers.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from duels.engine.heartbeats import WorkerBeat, worker_dead_after
from duels.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

REAPED_EXCEPTION = "duels.engine.worker_registry.WorkerDied"


class WorkerDied(Exception):
    """The worker running a task died; the task row was reaped (the engine resumes the work)."""


def worker_heartbeat_renew(*, workers: Iterable[WorkerBeat]) -> None:
    """Create or renew the heartbeat row of each live worker process of this supervisor."""
    now, host = timezone.now(), socket.gethostname()[:255]
    for beat in workers:
        WorkerHeartbeat.objects.update_or_create(
            worker_id=beat.worker_id,
            defaults={"host": host, "pid": beat.pid, "supervisor_pid": os.getpid(),
                      "queues": ",".join(beat.queues)[:255], "started_at": beat.started_at,
                      "last_seen_at": now},
        )


def worker_heartbeat_remove(*, worker_ids: list[str]) -> None:
    """Forget workers that stopped cleanly."""
    WorkerHeartbeat.objects.filter(worker_id__in=worker_ids).delete()


def worker_reap(*, worker_ids: list[str], reason: str) -> int:
    """Mark the RUNNING task rows last claimed by these (dead) workers FAILED; forget the
    workers. Returns how many task rows were reaped."""
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    dead = set(worker_ids)
    if not dead:
        return 0
    now = timezone.now()
    reaped = 0
    with transaction.atomic():
        running = DBTaskResult.objects.select_for_update().filter(
            status=TaskResultStatus.RUNNING)
        for row in running:
            last_worker = row.worker_ids[-1] if row.worker_ids else None
            if last_worker not in dead:
                continue
            DBTaskResult.objects.filter(pk=row.pk, status=TaskResultStatus.RUNNING).update(
                status=TaskResultStatus.FAILED, finished_at=now, return_value=None,
                exception_class_path=REAPED_EXCEPTION,
                traceback=f"WorkerDied: worker {last_worker} {reason}; its work is resumed by "
                          "the live workers\n",
            )
            reaped += 1
        WorkerHeartbeat.objects.filter(worker_id__in=dead).delete()
    if reaped:
        logger.warning("reaped %d task row(s) of dead worker(s) %s", reaped,
                       ", ".join(sorted(dead)))
    return reaped


def worker_reap_dead() -> int:
    """Reap the task rows of every worker whose heartbeat stopped."""
    cutoff = timezone.now() - worker_dead_after()
    stale = list(WorkerHeartbeat.objects.filter(last_seen_at__lt=cutoff)
                 .values_list("worker_id", "last_seen_at"))
    if not stale:
        return 0
    last_seen = max(seen for _, seen in stale)
    reason = f"stopped sending heartbeats (last {last_seen:%Y-%m-%d %H:%M:%S} UTC)"
    return worker_reap(worker_ids=[worker_id for worker_id, _ in stale], reason=reason)
