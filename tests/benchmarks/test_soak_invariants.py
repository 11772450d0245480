"""Each soak invariant holds on sound data and fails when one fault is planted in it: a step
written twice, a call billed twice, a tampered score, a lost episode, a duel left running,
stale analytics, a viewer that missed a step (a dropped doorbell never caught up), memory
that grows, a database that grows faster than its steps."""

from __future__ import annotations

import pytest
from django.db.models import F, Sum

from benchmarks.soak_parts import invariants as checks
from duels.models import Duel, Episode, ModelCall, Status, Step, Tournament
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def played():
    """A tournament of two finished duels whose totals equal their stored calls."""
    tournament = factories.tournament()
    duels = [factories.finished_duel(tournament=tournament, attempts=2) for _ in range(2)]
    Step.objects.update(cost=0.001)
    Episode.objects.update(end_reason="done")
    ModelCall.objects.create(duel=duels[0], player=duels[0].a, role="setter", cost=0.01)
    for episode in Episode.objects.all():
        sums = episode.trajectory.aggregate(cost=Sum("cost"), tokens_in=Sum("input_tokens"),
                                            tokens_out=Sum("output_tokens"))
        Episode.objects.filter(pk=episode.pk).update(
            cost=sums["cost"] or 0.0, input_tokens=sums["tokens_in"] or 0,
            output_tokens=sums["tokens_out"] or 0)
    for duel in duels:
        Duel.objects.filter(pk=duel.pk).update(cost=sum(
            e.cost for e in Episode.objects.filter(duel=duel)) + sum(
            c.cost for c in ModelCall.objects.filter(duel=duel)))
    Tournament.objects.filter(pk=tournament.pk).update(
        status=Status.FINISHED, cost=Duel.objects.aggregate(total=Sum("cost"))["total"])
    return duels


def test_sound_data_holds_every_database_invariant(played):
    for check in (checks.duels_ended, checks.episodes_complete, checks.steps_once,
                  checks.billing_once, checks.scores_recomputed):
        result = check()
        assert result.held, (result.name, result.figure)


def test_a_step_written_twice_fails(played):
    # A resumed episode stores its last step again under the next index.
    last = Step.objects.order_by("-episode_id", "-index").first()
    Step.objects.create(episode=last.episode, index=last.index + 1, observation=last.observation,
                        reply=last.reply, action=last.action)
    result = checks.steps_once()
    assert not result.held and str(last.episode.uuid) in result.figure


def test_a_skipped_step_fails(played):
    Step.objects.filter(index=1).first().delete()
    assert not checks.steps_once().held


def test_a_call_billed_twice_fails(played):
    episode = Episode.objects.first()
    step = episode.trajectory.order_by("-index").first()
    # The totals of one step added again, as a retried write would.
    Episode.objects.filter(pk=episode.pk).update(cost=F("cost") + step.cost)
    Duel.objects.filter(pk=episode.duel_id).update(cost=F("cost") + step.cost)
    result = checks.billing_once()
    assert not result.held and f"episode {episode.uuid}" in result.figure


def test_a_setter_call_billed_twice_fails(played):
    duel = played[0]
    Duel.objects.filter(pk=duel.pk).update(cost=F("cost") + 0.01)
    result = checks.billing_once()
    assert not result.held and f"duel {duel.uuid}" in result.figure


def test_a_tampered_score_fails(played):
    duel = played[1]
    Duel.objects.filter(pk=duel.pk).update(setter_score_a=F("setter_score_a") + 0.25)
    result = checks.scores_recomputed()
    assert not result.held and f"duel {duel.uuid}: setter_score_a" in result.figure


def test_an_outcome_that_disagrees_fails(played):
    duel = played[1]
    Duel.objects.filter(pk=duel.pk).update(outcome="b" if duel.outcome != "b" else "a")
    assert not checks.scores_recomputed().held


def test_a_lost_episode_fails(played):
    episode = Episode.objects.filter(duel=played[0]).last()
    episode.delete()
    result = checks.episodes_complete()
    assert not result.held and f"duel {played[0].uuid}" in result.figure


def test_an_episode_left_running_fails(played):
    Episode.objects.filter(pk=Episode.objects.first().pk).update(status=Status.RUNNING)
    assert not checks.episodes_complete().held


def test_a_duel_left_running_or_failed_silently_fails(played):
    Duel.objects.filter(pk=played[0].pk).update(status=Status.RUNNING)
    assert not checks.duels_ended().held
    Duel.objects.filter(pk=played[0].pk).update(status=Status.FAILED, error="")
    result = checks.duels_ended()
    assert not result.held and "failed without a reason" in result.figure
    Duel.objects.filter(pk=played[0].pk).update(error="provider kept failing")
    assert checks.duels_ended().held


def test_analytics_stale_after_a_new_duel_fails(played):
    from duels.services.analytics import analytics_refresh

    assert not checks.analytics_current().held  # nothing computed yet
    analytics_refresh(resamples=20)
    assert checks.analytics_current().held
    factories.finished_duel()
    assert not checks.analytics_current().held


def _watched(episode: Episode, indices: list[int], *, since=None, ended=True):
    return checks.Watched(episode=str(episode.uuid), since=since, indices=indices, ended=ended)


def test_viewers_invariant_holds_for_complete_streams_and_fails_for_a_dropped_step(played):
    episode = factories.episode(steps=4)
    whole = _watched(episode, [0, 1, 2, 3, 4])
    caught_up = _watched(episode, [3, 4, 4], since=2)  # a duplicate is dropped by index
    assert checks.viewers_saw_every_step([whole, caught_up]).held
    # A doorbell dropped and never caught up from the database: step 3 never arrived.
    dropped = _watched(episode, [0, 1, 2, 4])
    result = checks.viewers_saw_every_step([whole, dropped])
    assert not result.held and "missing [3]" in result.figure
    assert not checks.viewers_saw_every_step([_watched(episode, [0, 2, 1, 3, 4])]).held
    assert not checks.viewers_saw_every_step([_watched(episode, [0, 1], ended=False)]).held


def _rss(role, pid, values):
    return [checks.RssSample(at=float(t), role=role, pid=pid, rss=v * 2**20)
            for t, v in enumerate(values)]


def test_memory_invariant_fails_when_a_process_keeps_growing():
    flat = _rss("daphne", 1, [80, 100, 101, 102, 103]) + _rss("worker", 2, [90, 95, 96, 95, 97])
    assert checks.memory_flat(flat, warm_up_until=1).held
    growing = flat + _rss("worker", 3, [90, 100, 110, 120, 130])
    result = checks.memory_flat(growing, warm_up_until=1)
    assert not result.held and "worker 3 changed +30.0%" in result.figure
    # A killed worker (gone before the end) is not judged, but each role needs a survivor.
    killed = _rss("daphne", 1, [80, 100, 101, 102, 103]) + _rss("worker", 4, [90, 95, 300])
    assert not checks.memory_flat(killed, warm_up_until=1).held


def test_a_restarted_process_is_judged_once_it_has_warmed_up_itself():
    daphne = _rss("daphne", 1, [80, 100, 101, 102, 103, 103, 103, 104, 104, 104, 104, 104])
    # A worker restarted at t=2, still importing at the run's warm-up end (t=4), warm from t=6.
    restarted = [checks.RssSample(at=float(t), role="worker", pid=5, rss=v * 2**20)
                 for t, v in ((2, 30), (4, 50), (5, 90), (7, 120), (9, 121), (11, 122))]
    assert checks.memory_flat(daphne + restarted, warm_up_until=4).held
    leaking = [checks.RssSample(at=float(t), role="worker", pid=6, rss=v * 2**20)
               for t, v in ((2, 30), (4, 50), (7, 120), (9, 140), (11, 160))]
    result = checks.memory_flat(daphne + leaking, warm_up_until=4)
    assert not result.held and "worker 6 changed +33.3%" in result.figure


def test_database_invariant_fails_when_growth_outpaces_steps():
    linear = [(steps, 10_000_000 + 2_500 * steps) for steps in range(0, 2000, 100)]
    assert checks.database_linear(linear).held
    quadratic = [(steps, 10_000_000 + 3 * steps * steps) for steps in range(0, 2000, 100)]
    result = checks.database_linear(quadratic)
    assert not result.held and "later/earlier bytes per step" in result.figure
    assert not checks.database_linear(linear[:2]).held  # too few samples says so
