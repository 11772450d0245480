"""The analytics page always shows figures: computed on first view, then shown with their age,
marked stale when the data changed, refreshed in the background, and led by the five findings."""

from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from duels.models import AnalyticsSnapshot
from duels.services.analytics import analytics_data_changed, analytics_refresh
from duels.tasks import analytics_refresh_task

pytestmark = pytest.mark.django_db

FINDING_IDS = ["solver_not_setter", "small_models_set_harder", "transitive", "designs_converge",
               "gain_predicts_transfer"]


def test_first_view_computes_and_leads_with_five_finding_cards(owner_client):
    content = owner_client.get("/analytics/").content.decode()
    assert AnalyticsSnapshot.objects.count() == 1
    assert "Figures computed at" in content and "ago" in content
    positions = [content.index(f'id="finding-{finding_id}"') for finding_id in FINDING_IDS]
    assert positions == sorted(positions)
    assert positions[0] < content.index('id="analytics-empty"')
    assert content.count("Not enough data") >= 5  # each verdict, written one way
    assert 'href="/glossary/#not_enough_data"' in content
    assert "What would settle it:" in content
    assert 'id="analytics-stale"' not in content


def test_a_finished_duel_marks_the_shown_figures_stale_and_queues_a_refresh(owner_client, make):
    analytics_refresh()
    make.finished_duel()
    content = owner_client.get("/analytics/").content.decode()
    assert 'id="analytics-stale"' in content
    assert "hx-get=\"/analytics/status/?shown=" in content
    assert DBTaskResult.objects.filter(task_path=analytics_refresh_task.module_path).exists()


def test_status_poll_reloads_the_page_once_newer_figures_are_current(owner_client, make):
    shown = analytics_refresh()
    make.finished_duel()
    still_stale = owner_client.get(f"/analytics/status/?shown={shown.pk}")
    assert still_stale.status_code == 200 and b"analytics-stale" in still_stale.content
    analytics_refresh()
    fresh = owner_client.get(f"/analytics/status/?shown={shown.pk}")
    assert fresh.status_code == 204 and fresh["HX-Refresh"] == "true"


def test_figures_are_escaped_in_finding_cards(owner_client, make):
    a = make.player(name="<b>bold</b>")
    make.finished_duel(a=a)
    content = owner_client.get("/analytics/").content.decode()
    assert "<b>bold</b>" not in content


def test_a_stale_mark_reaches_a_page_that_already_parsed_the_snapshot(owner_client):
    analytics_refresh()
    assert 'id="analytics-stale"' not in owner_client.get("/analytics/").content.decode()
    analytics_data_changed()  # e.g. a duel edited in a way no count shows
    assert 'id="analytics-stale"' in owner_client.get("/analytics/").content.decode()


def test_transitivity_states_its_definition_and_interval_method(owner_client, make):
    players = [make.player(name=f"q{i}") for i in range(3)]
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            make.finished_duel(a=a, b=b, unhinted_b=(True, True), hinted_b=(True, True))
    analytics_refresh()
    content = owner_client.get("/analytics/").content.decode()
    assert "ζ and the share are computed over decided triples" in content
    assert "1 of 1 triples are decided" in content
    assert "bootstrap percentile, 1000 resamples of whole duels" in content
