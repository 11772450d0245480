"""A snapshot knows the data it was computed from: writes that change that data mark it stale,
and `analytics_current` recomputes a stale or missing one before anybody reads it."""

from __future__ import annotations

import io

import pytest
from django.utils import timezone

from duels.engine.duels import duel_finalize_if_complete
from duels.exchange.transfer import transfer_import_csv
from duels.models import AnalyticsSnapshot, Duel, Player, Status
from duels.selectors.analytics import analytics_fingerprint
from duels.services.analytics import analytics_current, analytics_is_current, analytics_refresh

pytestmark = pytest.mark.django_db


def test_a_missing_snapshot_is_computed_and_a_current_one_reused(make):
    first = analytics_current()
    assert analytics_current().pk == first.pk
    assert first.fingerprint == analytics_fingerprint()


def test_the_fingerprint_follows_finished_duels_episodes_transfers_and_sizes(make):
    before = analytics_fingerprint()
    duel = make.finished_duel()
    after_duel = analytics_fingerprint()
    assert after_duel["duels"] != before["duels"] and after_duel["episodes"] != before["episodes"]
    Player.objects.filter(pk=duel.a_id).update(parameters_b=7.0)
    assert analytics_fingerprint()["players"] != after_duel["players"]


def test_a_finishing_duel_marks_the_snapshot_stale_and_the_next_read_recomputes(make):
    duel = make.finished_duel()
    Duel.objects.filter(pk=duel.pk).update(status=Status.RUNNING, finished_at=None)
    snapshot = analytics_refresh(resamples=20)
    assert analytics_is_current(snapshot=snapshot)
    assert duel_finalize_if_complete(duel=duel) is True
    snapshot.refresh_from_db()
    assert snapshot.stale is True
    fresh = analytics_current()
    assert fresh.pk != snapshot.pk and fresh.data["summary"]["duels"] == 1


def test_a_transfer_upload_marks_the_snapshot_stale(make):
    duel = make.finished_duel()
    snapshot = analytics_refresh(resamples=20)
    csv_text = ("learner,environment,author,benchmark,before,after\n"
                f"{duel.b.name},{duel.env_a.uuid},,gsm8k,0.4,0.6\n")
    transfer_import_csv(stream=io.StringIO(csv_text))
    snapshot.refresh_from_db()
    assert snapshot.stale is True and not analytics_is_current(snapshot=snapshot)


def test_an_edit_the_counts_cannot_see_is_caught_by_the_stale_mark(make):
    make.finished_duel()
    snapshot = analytics_refresh(resamples=20)
    AnalyticsSnapshot.objects.filter(pk=snapshot.pk).update(stale=True, computed_at=timezone.now())
    assert analytics_current().pk != snapshot.pk
