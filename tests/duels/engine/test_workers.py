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
