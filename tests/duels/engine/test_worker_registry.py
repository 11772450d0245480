"""Worker heartbeats, and reaping the task rows of workers that died."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from duels.engine.supervisor import ENGINE_QUEUES, SERVICE_QUEUES, all_queues, worker_children
from duels.engine.worker_registry import REAPED_EXCEPTION, worker_reap_dead
from duels.models import WorkerHeartbeat
from duels.tasks import analytics_refresh_task

pytestmark = pytest.mark.django_db


def _running_task(worker_id: str) -> DBTaskResult:
    result = analytics_refresh_task.enqueue()
    row = DBTaskResult.objects.get(pk=result.id)
    row.claim(worker_id)
    return row


def _heartbeat(worker_id: str, *, seconds_ago: float) -> WorkerHeartbeat:
    seen = timezone.now() - timedelta(seconds=seconds_ago)
    return WorkerHeartbeat.objects.create(worker_id=worker_id, host="h", pid=1, supervisor_pid=1,
                                          queues="duels,episodes", started_at=seen,
                                          last_seen_at=seen)


def test_the_workers_serve_every_queue_with_the_short_jobs_apart():
    children = worker_children(concurrency=3, prefix="test")
    assert [child.queues for child in children[:3]] == [ENGINE_QUEUES] * 3
    assert set(children[3].queues) >= set(SERVICE_QUEUES)
    served = {queue for child in children for queue in child.queues}
    assert served == set(all_queues())
    assert len({child.worker_id for child in children}) == 4
    assert all(len(child.worker_id) <= 64 for child in children)


def test_a_silent_workers_running_tasks_are_reaped_and_a_live_ones_are_not(settings):
    settings.ENVDUELS_WORKER_HEARTBEAT_SECONDS = 10
    _heartbeat("dead-worker", seconds_ago=31)
    _heartbeat("live-worker", seconds_ago=5)
    dead_task, live_task = _running_task("dead-worker"), _running_task("live-worker")

    assert worker_reap_dead() == 1

    dead_task.refresh_from_db()
    live_task.refresh_from_db()
    assert dead_task.status == TaskResultStatus.FAILED
    assert dead_task.exception_class_path == REAPED_EXCEPTION
    assert "dead-worker stopped sending heartbeats" in dead_task.traceback
    assert live_task.status == TaskResultStatus.RUNNING
    assert list(WorkerHeartbeat.objects.values_list("worker_id", flat=True)) == ["live-worker"]


def test_worker_refuses_a_concurrency_below_one():
    with pytest.raises(CommandError, match="at least 1"):
        call_command("worker", "--concurrency", "0")


def test_a_restarted_worker_gets_a_fresh_id_so_the_dead_ones_rows_can_be_reaped():
    child = worker_children(concurrency=1, prefix="worker-99")[0]
    first = child.worker_id
    child.renamed("1")
    child.renamed("2")
    assert child.worker_id != first and child.worker_id.endswith(first.split("@", 1)[1])
    assert child.worker_id.startswith("worker-99-worker-1.2@")
    assert child.argv[child.argv.index("--worker-id") + 1] == child.worker_id
