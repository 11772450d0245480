"""`data_changed` reaches the analytics service; background tasks are found by name."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django_tasks_db.models import DBTaskResult

from duels.engine.duels import duel_finalize_if_complete
from duels.engine.task_registry import task_named
from duels.models import AnalyticsSnapshot, Duel, Status
from duels.services.analytics import analytics_refresh
from duels.signals import data_changed
from duels.tasks import analytics_refresh_task, tournament_drive_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent():
    """The senders of every `data_changed` sent during the test."""
    senders: list[object] = []

    def record(sender, **kwargs) -> None:
        senders.append(sender)

    data_changed.connect(record, dispatch_uid="test-record")
    yield senders
    data_changed.disconnect(dispatch_uid="test-record")


def test_data_changed_marks_the_snapshot_stale_and_queues_one_refresh():
    snapshot = analytics_refresh(resamples=10)
    assert not snapshot.stale
    data_changed.send(sender=Duel)
    data_changed.send(sender=Duel)  # a second change within the debounce window shares it
    snapshot.refresh_from_db()
    assert snapshot.stale
    refreshes = DBTaskResult.objects.filter(task_path=analytics_refresh_task.module_path)
    assert refreshes.count() == 1


def test_a_duel_the_engine_finishes_sends_data_changed_once(make, sent):
    duel = make.finished_duel(attempts=1, unhinted_a=(False,), hinted_a=(True,),
                              unhinted_b=(False,), hinted_b=(False,))
    Duel.objects.filter(pk=duel.pk).update(status=Status.RUNNING, outcome=None)
    assert duel_finalize_if_complete(duel=duel) is True
    assert duel_finalize_if_complete(duel=duel) is False
    assert sent == [Duel]
    duel.refresh_from_db()
    assert duel.status == Status.FINISHED and duel.outcome == "a"
    assert AnalyticsSnapshot.objects.filter(stale=False).count() == 0


def test_tasks_are_registered_by_name_when_the_app_is_ready():
    assert task_named("tournament_drive") is tournament_drive_task
    assert task_named("analytics_refresh") is analytics_refresh_task


def test_an_unknown_task_name_says_how_to_fix_it():
    with pytest.raises(ImproperlyConfigured, match="INSTALLED_APPS"):
        task_named("no_such_task")
