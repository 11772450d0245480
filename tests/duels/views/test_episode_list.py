"""`/episodes/`: every episode, filtered by solver, setter, condition, outcome, environment,
tournament or study, a page at a time in a constant number of queries; the same facets narrow
the cross-transcript search."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from duels.models import Condition, Episode, Status, Step, Study
from duels.selectors import search
from duels.selectors.episode_list import EpisodeFilters

pytestmark = pytest.mark.django_db


def listed(client, **params) -> list[str]:
    response = client.get("/episodes/", params)
    assert response.status_code == 200, response.content.decode()[:500]
    return re.findall(r'data-episode="([0-9a-f-]{36})"', response.content.decode())


@pytest.fixture
def field(make):
    ada, bob = make.player(name="ada"), make.player(name="bob")
    tournament = make.tournament(players=[ada, bob], name="Spring")
    duel = make.finished_duel(a=ada, b=bob, tournament=tournament,
                              unhinted_a=(False, False), hinted_a=(True, False))
    other = make.finished_duel(a=bob, b=ada)  # no tournament
    study = Study.objects.create(name="field run")
    copy = make.environment(source=duel.env_a.source, author=bob, title="A copy")
    study_play = make.episode(environment=copy, solver=ada, study=study, success=True, steps=1)
    return {"ada": ada, "bob": bob, "tournament": tournament, "duel": duel, "other": other,
            "study": study, "study_play": study_play}


def test_each_facet_narrows_the_list(owner_client, field):
    duel, ada, bob = field["duel"], field["ada"], field["bob"]
    everything = listed(owner_client)
    assert len(everything) == Episode.objects.count() == 17
    by_solver = listed(owner_client, solver=ada.uuid)
    assert set(by_solver) == {str(e.uuid) for e in Episode.objects.filter(solver=ada)}
    by_setter = listed(owner_client, setter=ada.uuid)
    assert set(by_setter) == {str(e.uuid) for e in Episode.objects.filter(
        environment__author=ada)}
    hinted = listed(owner_client, condition="hinted")
    assert set(hinted) == {str(e.uuid) for e in Episode.objects.filter(
        condition=Condition.HINTED)}
    passed = listed(owner_client, outcome="passed")
    assert set(passed) == {str(e.uuid) for e in Episode.objects.filter(
        status=Status.FINISHED, success=True)}
    lost = listed(owner_client, outcome="not_passed")
    assert set(lost) | set(passed) == set(everything) and not set(lost) & set(passed)
    # An environment names its design: the study's copy is listed with the duel's episodes.
    design = listed(owner_client, environment=duel.env_a.uuid)
    assert str(field["study_play"].uuid) in design and len(design) == 5
    in_tournament = listed(owner_client, tournament=field["tournament"].uuid)
    assert set(in_tournament) == {str(e.uuid) for e in duel.episodes.all()}
    assert listed(owner_client, study=field["study"].uuid) == [str(field["study_play"].uuid)]
    both = listed(owner_client, solver=bob.uuid, condition="unhinted",
                  tournament=field["tournament"].uuid)
    assert set(both) == {str(e.uuid) for e in duel.episodes.filter(
        solver=bob, condition=Condition.UNHINTED)}
    page = owner_client.get("/episodes/", {"study": field["study"].uuid}).content.decode()
    assert "study field run" in page


def test_a_bad_facet_is_a_400_naming_it(owner_client, field):
    response = owner_client.get("/episodes/", {"outcome": "won", "environment": "nope"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "outcome must be one of: passed, not_passed, decided, no_result, not_ended" in page
    assert "environment: Enter a valid UUID." in page


def test_pages_cost_the_same_queries_and_continue_by_cursor(owner_client, make):
    solver = make.player()
    environment = make.environment()
    for _ in range(3):
        make.episode(environment=environment, solver=solver)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert owner_client.get("/episodes/").status_code == 200
        return len(captured.captured_queries)

    few = queries()
    for _ in range(70):
        make.episode(solver=make.player(), environment=make.environment(author=make.player()))
    assert queries() == few
    first = owner_client.get("/episodes/").content.decode()
    shown = re.findall(r'data-episode="([0-9a-f-]{36})"', first)
    assert len(shown) == 50 and "Older episodes" in first
    cursor = re.search(r'href="\?before=(\d+)"', first).group(1)
    rest = listed(owner_client, before=cursor)
    assert len(rest) == 23 and not set(rest) & set(shown)


def test_the_transcript_search_takes_the_same_facets(owner_client, field, monkeypatch):
    duel, ada = field["duel"], field["ada"]
    for episode in Episode.objects.all():
        Step.objects.filter(episode=episode).update(observation="a brass lantern")
    everything = owner_client.get("/duels/search/", {"q": "lantern"}).content.decode()
    assert everything.count('class="label"') == Step.objects.count()
    narrowed = owner_client.get("/duels/search/", {"q": "lantern", "solver": ada.uuid,
                                                   "condition": "hinted"}).content.decode()
    expected = Step.objects.filter(episode__solver=ada, episode__condition="hinted").count()
    assert narrowed.count('class="label"') == expected > 0
    assert 'name="solver"' in narrowed and "in the episodes the filters choose" in narrowed
    steps = search.transcripts_search(query="lantern",
                                      filters=EpisodeFilters(tournament=field["tournament"].uuid))
    assert {hit.step.episode.duel_id for hit in steps.hits} == {duel.pk}
    # The facets look at a bounded number of matches a page, and say when they stopped.
    monkeypatch.setattr(search, "FACETED_SCAN", 3)
    capped = owner_client.get("/duels/search/", {"q": "lantern",
                                                 "study": field["study"].uuid}).content.decode()
    assert 'id="search-capped"' in capped and "Look further back" in capped
