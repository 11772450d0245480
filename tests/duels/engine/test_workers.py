"""Finding work whose worker died, without doubling work that is merely queued."""

from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from duels.engine.workers import work_resume_stale
from duels.models import Status
from duels.tasks import tournament_drive_task

pytestmark = pytest.mark.django_db


def drivers_queued(uuid: str) -> int:
    return sum(
        1
        for row in DBTaskResult.objects.filter(status="READY").values_list("args_kwargs", flat=True)
        if row["kwargs"].get("tournament_uuid") == uuid
    )


def test_an_unattended_running_tournament_gets_a_driver(make):
    tournament = make.tournament(status=Status.RUNNING)
    assert work_resume_stale() == [str(tournament.uuid)]
    assert drivers_queued(str(tournament.uuid)) == 1


def test_a_tournament_whose_driver_is_still_queued_is_left_alone(make):
    tournament = make.tournament(status=Status.RUNNING)
    tournament_drive_task.enqueue(tournament_uuid=str(tournament.uuid))
    assert work_resume_stale() == []
    assert drivers_queued(str(tournament.uuid)) == 1


def test_finished_tournaments_are_not_resumed(make):
    make.tournament(status=Status.FINISHED)
    assert work_resume_stale() == []


def _driver_running_on(tournament, worker_id: str) -> None:
    result = tournament_drive_task.enqueue(tournament_uuid=str(tournament.uuid))
    DBTaskResult.objects.get(pk=result.id).claim(worker_id)


def test_a_driver_running_on_a_live_worker_is_left_alone_but_not_on_an_unknown_one(make):
    from datetime import timedelta

    from django.utils import timezone

    from duels.models import WorkerHeartbeat

    now = timezone.now()
    WorkerHeartbeat.objects.create(worker_id="live-worker", host="h", pid=1, supervisor_pid=1,
                                   queues="duels", started_at=now, last_seen_at=now)
    waiting = make.tournament(status=Status.RUNNING)  # its work waits out a backoff, say
    _driver_running_on(waiting, "live-worker")
    orphan = make.tournament(status=Status.RUNNING)
    _driver_running_on(orphan, "bare-db-worker-without-heartbeats")
    WorkerHeartbeat.objects.filter(worker_id="live-worker").update(
        last_seen_at=now - timedelta(seconds=1))

    assert work_resume_stale() == [str(orphan.uuid)]
    assert work_resume_stale() == []  # the new driver is queued: once is enough
