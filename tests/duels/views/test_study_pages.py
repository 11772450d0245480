"""The study pages: who may start and cancel, the form with its bill, the page's live progress
and figures, every table as CSV and JSON, and study episodes in replays, compare and search."""

from __future__ import annotations

import json
import re

import pytest
from django_tasks_db.models import DBTaskResult

from duels.models import Episode, Status, Study
from duels.studies.results import study_figures_refresh
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def _form(players, **overrides):
    data = {"players": [str(p.uuid) for p in players], "per_author": 2, "seeds": 2,
            "harden_rounds": 1, "domains": "maze,cipher", "self_play": "on",
            "concurrency": 8}
    data.update(overrides)
    return data


def test_only_operators_start_a_study_and_outsiders_see_nothing(client, teammate, make):
    players = [make.player(), make.player()]
    assert client.get("/studies/").status_code == 302  # signed out: to the login page
    client.force_login(teammate)
    page = client.get("/studies/new/")
    assert page.status_code == 403 and "Only operators start studies" in page.text
    assert client.post("/studies/new/", _form(players)).status_code == 403
    assert not Study.objects.exists()
    assert "New study" not in client.get("/studies/").text


def test_the_estimate_shows_the_bill_and_creates_nothing(owner_client, make):
    players = [make.player(price_in=3.0, price_out=15.0), make.player()]
    page = owner_client.post("/studies/new/", {**_form(players), "estimate": "1"})
    assert page.status_code == 200
    assert "Expected bill" in page.text and "Nothing was created" in page.text
    assert "up to 8</dd>" in page.text and "up to 64</dd>" in page.text
    assert not Study.objects.exists()


def test_bad_input_comes_back_with_the_reason(owner_client, make):
    players = [make.player(), make.player()]
    page = owner_client.post("/studies/new/", _form(players, domains="Maze!"))
    assert page.status_code == 400
    assert "a domain is 1 to 60 lower-case letters" in page.text
    page = owner_client.post("/studies/new/", _form(players[:1]))
    assert page.status_code == 400 and "at least two different players" in page.text
    assert not Study.objects.exists()


def test_a_valid_form_creates_and_queues_the_study(owner_client, owner, make,
                                                   django_capture_on_commit_callbacks):
    players = [make.player(), make.player(), make.player()]
    with django_capture_on_commit_callbacks(execute=True):
        page = owner_client.post("/studies/new/", _form(players, name="Three players"))
    study = Study.objects.get()
    assert page.status_code == 302 and page["Location"] == f"/studies/{study.uuid}/"
    assert study.created_by == owner and study.status == Status.RUNNING
    assert study.name == "Three players" and study.domains == ["maze", "cipher"]
    assert study.slots.count() == 6
    assert DBTaskResult.objects.filter(task_path="duels.tasks.study_drive_task").exists()


def test_the_page_shows_progress_matrix_rankings_hardening_and_lineage(owner_client, make):
    study = played_study(invalid_revision_of="gamma")
    study_figures_refresh(study=study, resamples=50)
    page = owner_client.get(f"/studies/{study.uuid}/")
    assert page.status_code == 200
    text = page.text
    assert "3 / 3 slots done" in text
    # The matrix: alpha's final version (its revision) was failed unhinted and passed hinted
    # by everyone, gamma's final version (its first, its revision invalid) passed in both.
    plain = re.sub(r"<[^>]+>", "", text)  # each rate is a link to its plays
    assert "Author × solver" in text and "0% / 100%" in plain and "100% / 100%" in plain
    assert 'id="study-rankings"' in text and "/glossary/#canonical_autonomous_solve" in text
    # The lineage: versions, which is final, and why gamma's stopped.
    assert "env_001/harden_01" in text and "final</span>" in text
    assert "env_001/harden_01: invalid environment" in text
    assert "env_001 stays the final version" in text
    # The first-to-final change of the unhinted pass rate, with its interval.
    figures = Study.objects.get(pk=study.pk).figures
    change = figures["hardening_first_to_final"]
    assert change["p_unhinted_change"] < 0
    assert "What hardening changed" in text and " pp over 3 slots" in text


def test_the_live_poll_answers_progress_and_reloads_for_newer_figures(owner_client, make):
    study = played_study()
    poll = owner_client.get(f"/studies/{study.uuid}/", HTTP_HX_REQUEST="true",
                            HTTP_HX_TARGET="study-progress")
    assert poll.status_code == 200 and "slots done" in poll.text
    assert "Rankings" not in poll.text
    figures = study_figures_refresh(study=study, resamples=20)
    stale = owner_client.get(f"/studies/{study.uuid}/", {"figures": "older"},
                             HTTP_HX_REQUEST="true", HTTP_HX_TARGET="study-progress")
    assert stale.status_code == 204 and stale["HX-Refresh"] == "true"
    same = owner_client.get(f"/studies/{study.uuid}/", {"figures": figures["computed_at"]},
                            HTTP_HX_REQUEST="true", HTTP_HX_TARGET="study-progress")
    assert same.status_code == 200


def test_every_table_downloads_as_csv_and_json(owner_client, make):
    study = played_study()
    study_figures_refresh(study=study, resamples=20)
    for table in ("models", "environments", "pairs", "matrix", "head_to_head", "hardening",
                  "ratings", "solve_ratings", "author_ratings", "slots"):
        as_json = owner_client.get(f"/studies/{study.uuid}/tables/{table}.json")
        assert as_json.status_code == 200, table
        rows = json.loads(as_json.content)["rows"]
        assert rows, table
        as_csv = owner_client.get(f"/studies/{study.uuid}/tables/{table}.csv")
        assert as_csv.status_code == 200 and as_csv["Content-Type"].startswith("text/csv")
        lines = as_csv.content.decode().strip().splitlines()
        assert len(lines) == len(rows) + 1, table
    models = owner_client.get(f"/studies/{study.uuid}/tables/models.csv").content.decode()
    assert "canonical_autonomous_solve_low" in models.splitlines()[0]
    assert owner_client.get(f"/studies/{study.uuid}/tables/nothing.csv").status_code == 404


def test_the_starter_or_staff_cancel_a_study(client, owner, teammate, staff, make):
    study = played_study()
    Study.objects.filter(pk=study.pk).update(status=Status.RUNNING, created_by=owner)
    client.force_login(teammate)
    assert client.post(f"/studies/{study.uuid}/cancel/", {"confirm": "yes"}).status_code == 403
    client.force_login(owner)
    asked = client.get(f"/studies/{study.uuid}/cancel/")
    assert asked.status_code == 200 and "Cancelling stops it" in asked.text
    done = client.post(f"/studies/{study.uuid}/cancel/", {"confirm": "yes"})
    assert done.status_code == 302
    assert Study.objects.get(pk=study.pk).status == Status.CANCELLED


def test_study_episodes_replay_compare_and_search_as_duel_episodes(owner_client, make):
    study = played_study()
    study_figures_refresh(study=study, resamples=20)
    episode = Episode.objects.filter(study=study, condition="hinted").select_related(
        "environment").first()
    replay = owner_client.get(f"/episodes/{episode.uuid}/")
    assert replay.status_code == 200
    assert f"/studies/{study.uuid}/" in replay.text and episode.environment.version in replay.text
    compare = owner_client.get(f"/episodes/{episode.uuid}/compare/")
    assert compare.status_code == 200 and "back to the study" in compare.text
    pick = owner_client.get("/compare/")
    assert study.name in pick.text
    found = owner_client.get("/duels/search/", {"q": "try"})
    assert found.status_code == 200 and f"/studies/{study.uuid}/" in found.text
    # The version's environment page: its lineage and the field's results on it.
    version = owner_client.get(f"/environments/{episode.environment.uuid}/")
    assert version.status_code == 200
    assert "Version env_001" in version.text and "Lineage:" in version.text
    assert 'id="study-version"' in version.text


def test_the_dashboard_follows_running_studies(owner_client, make):
    study = played_study()
    Study.objects.filter(pk=study.pk).update(status=Status.RUNNING, finished_at=None,
                                             slots_done=1)
    page = owner_client.get("/").text
    assert f"/studies/{study.uuid}/" in page and "1 / 3 slots" in page
    poll = owner_client.get("/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="dashboard-progress")
    assert study.name in poll.text
