"""An evaluation's plays replay, compare and list like every other episode: the replay's
breadcrumbs lead to the panel, its compare link opens the same version, solver and seed in the
other condition of the same evaluation, and /episodes/ narrows to one evaluation."""

from __future__ import annotations

import pytest

from duels.models import Condition, Episode, Evaluation, Status
from duels.panels.create import panel_from_designs

pytestmark = pytest.mark.django_db


@pytest.fixture
def plays(make):
    environment = make.environment(benchmark_seeds=[3, 4])
    hint = make.hint(environment=environment)
    panel, _ = panel_from_designs(hashes=[environment.content_hash], name="frozen <b>one</b>")
    evaluation = Evaluation.objects.create(panel=panel, player=make.player(name="checkpoint"))
    made = {}
    for condition, episode_hint in ((Condition.UNHINTED, None), (Condition.HINTED, hint)):
        made[condition] = Episode.objects.create(
            evaluation=evaluation, environment=environment, solver=evaluation.player, seed=3,
            condition=condition, hint=episode_hint, status=Status.FINISHED, success=True)
    # The same version, solver and seed played elsewhere: compare must stay in the evaluation.
    Episode.objects.create(environment=environment, solver=evaluation.player, seed=3,
                           condition=Condition.HINTED, hint=hint, status=Status.FINISHED)
    return evaluation, made


def test_a_play_replays_with_the_panel_in_its_breadcrumbs(owner_client, plays):
    evaluation, made = plays
    page = owner_client.get(f"/episodes/{made[Condition.UNHINTED].uuid}/").content.decode()
    assert f"/panels/{evaluation.panel.uuid}/" in page
    assert "frozen &lt;b&gt;one&lt;/b&gt;" in page and "<b>one</b>" not in page


def test_compare_opens_the_other_condition_of_the_same_evaluation(owner_client, plays):
    _, made = plays
    outside = Episode.objects.get(evaluation=None)
    page = owner_client.get(f"/episodes/{made[Condition.UNHINTED].uuid}/compare/").content.decode()
    assert str(made[Condition.HINTED].uuid) in page and str(outside.uuid) not in page
    assert "back to the panel" in page


def test_the_episode_list_narrows_to_one_evaluation(owner_client, plays):
    evaluation, made = plays
    page = owner_client.get(f"/episodes/?evaluation={evaluation.uuid}").content.decode()
    assert all(str(episode.uuid) in page for episode in made.values())
    assert page.count("/episodes/") >= 2 and "panel frozen" in page
    everything = owner_client.get("/episodes/").content.decode()
    assert everything.count("checkpoint") >= 3
