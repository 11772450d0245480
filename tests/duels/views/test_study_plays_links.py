"""Every number on a study page opens its plays: each link to the episode list (matrix cells,
version rows, the slot story's rows, and any other a page adds) lists exactly the plays its
`data-plays` announces; the list's new filters (version, domain, seed, final, peers, flipped)
each narrow it to what they say."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from duels.models import Condition, Environment, Episode, Status
from duels.selectors.episode_list import EpisodeFilters, episode_list_page
from duels.studies.results import study_figures_refresh
from tests.helpers.plays_links import assert_links_open_their_plays, listed_plays
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def _results(author, revision, solver, seed, hinted):
    """Outcomes that differ by author, solver, seed and condition, so no two links agree by
    chance: alpha's revision is flipped by the hint for beta on seed 11 only, …"""
    code = (sum(map(ord, author + solver)) + seed * 3 + revision * 5 + hinted * 7) % 5
    return code in (0, 2, 3) if hinted else code in (0, 4)


@pytest.fixture
def study():
    study = played_study(results=_results, invalid_revision_of="gamma")
    # A play infrastructure ended counts in no figure: no link may list it.
    play = Episode.objects.filter(study=study).first()
    Episode.objects.filter(pk=play.pk).update(status=Status.FAILED, end_reason="infra_error")
    study_figures_refresh(study=study, resamples=20)
    return study


def test_every_link_on_the_study_page_lists_exactly_its_plays(owner_client, study):
    page = owner_client.get(f"/studies/{study.uuid}/").content.decode()
    walked = assert_links_open_their_plays(owner_client, page)
    # 3 authors × 3 solvers × 2 conditions in the matrix, 5 valid versions × 2 in the lineage.
    assert walked >= 18 + 10


def test_every_link_on_a_slot_story_lists_exactly_its_plays(owner_client, study):
    flipped = 0
    for lineage in ("alpha/env_001", "beta/env_001", "gamma/env_001"):
        page = owner_client.get(f"/studies/{study.uuid}/slots/{lineage}/").content.decode()
        assert assert_links_open_their_plays(owner_client, page) >= 6
        flipped += page.count("flipped=1")
    assert flipped  # the pairs the hint flipped are among the links walked


def test_the_list_is_one_query_a_page_whatever_the_filters(study):
    filters = EpisodeFilters(study=study.uuid, version=None, domain="maze", seed=11, final=True,
                             peers=True, flipped=True, outcome="decided")
    with CaptureQueriesContext(connection) as queries:
        page = episode_list_page(filters=filters)
    assert page.episodes and len(queries) == 1


def _uuids(queryset) -> set[str]:
    return {str(uuid) for uuid in queryset.values_list("uuid", flat=True)}


def test_every_link_on_a_study_versions_environment_page_lists_exactly_its_plays(
        owner_client, study):
    for version in Environment.objects.filter(study=study, status="valid"):
        page = owner_client.get(f"/environments/{version.uuid}/").content.decode()
        assert assert_links_open_their_plays(owner_client, page) == 3 * 2  # solvers × conditions


def test_each_new_filter_narrows_the_list(owner_client, study):
    plays = Episode.objects.filter(study=study)
    version = plays.filter(environment__revision=1).first().environment
    assert set(listed_plays(owner_client, f"/episodes/?version={version.uuid}")) == _uuids(
        plays.filter(environment=version))
    assert set(listed_plays(owner_client, "/episodes/?domain=maze&seed=22")) == _uuids(
        plays.filter(seed=22))
    assert not listed_plays(owner_client, "/episodes/?domain=cipher")
    final = set(listed_plays(owner_client, f"/episodes/?study={study.uuid}&final=1"))
    # gamma's revision failed validation: its first version stays final.
    assert final == _uuids(plays.filter(environment__revision=1).exclude(
        environment__author__name="gamma")) | _uuids(plays.filter(
            environment__revision=0, environment__author__name="gamma"))
    peers = set(listed_plays(owner_client, f"/episodes/?study={study.uuid}&peers=1"))
    assert peers == {str(p.uuid) for p in plays.select_related("environment")
                     if p.solver_id != p.environment.author_id}
    flipped = set(listed_plays(owner_client, f"/episodes/?study={study.uuid}&flipped=1"))
    expected = set()
    for play in plays.filter(condition=Condition.UNHINTED, status=Status.FINISHED,
                             success=False):
        partner = plays.filter(environment=play.environment, solver=play.solver, seed=play.seed,
                               condition=Condition.HINTED, status=Status.FINISHED,
                               success=True).first()
        if partner:
            expected |= {str(play.uuid), str(partner.uuid)}
    assert expected and flipped == expected
    decided = set(listed_plays(owner_client, f"/episodes/?study={study.uuid}&outcome=decided"))
    assert decided == _uuids(plays.exclude(status=Status.FAILED))


def test_a_bad_filter_value_is_refused_with_the_reason(owner_client, study):
    response = owner_client.get("/episodes/?seed=north")
    assert response.status_code == 400
    assert re.search(r"seed", response.content.decode())


def test_a_setters_figures_open_their_peers_plays(owner_client, study):
    """Design, hint authoring and the final versions' setter score link to the author's final
    versions as its peers played them, and each list holds the figure's plays."""
    page = owner_client.get(f"/studies/{study.uuid}/").content.decode()
    setters = page[page.index('id="setters-table"'):]
    setters = setters[:setters.index("</table>")]
    linked = re.findall(r'data-figure="(design|hint_authoring|setter_score_final)">'
                        r'<a href="([^"]*)" data-plays="(\d+)"', setters)
    assert {figure for figure, _, _ in linked} == {"design", "hint_authoring",
                                                   "setter_score_final"}
    for figure, url, plays in linked:
        assert "setter=" in url and "peers=1" in url and "final=1" in url
        assert ("condition=unhinted" in url) == (figure != "hint_authoring")
        assert len(listed_plays(owner_client, url.replace("&amp;", "&"))) == int(plays)
    assert_links_open_their_plays(owner_client, setters)
