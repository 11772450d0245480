"""The work loop's bounds: in-flight work depends on the concurrency, never on the schedule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from duels.engine.duel_scope import DuelScope
from duels.engine.scheduler import _claim_authoring, _claim_order, authoring_limit
from duels.engine.tournaments import tournament_create
from duels.models import Duel, Episode, Status

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("concurrency", "expected"), [(1, 1), (4, 2), (12, 3), (16, 4), (40, 10)])
def test_authoring_gets_a_small_bound_of_its_own(concurrency, expected):
    assert authoring_limit(concurrency) == expected


def test_authoring_claims_stop_at_the_limit_across_drivers(make):
    tournament = tournament_create(players=[make.player() for _ in range(4)], rounds=4,
                                   attempts=1, concurrency=8)
    scope = DuelScope(tournament=tournament, duel=None)
    claimed = [_claim_authoring(scope, owner, 2) for owner in ("w1", "w2", "w1")]
    assert claimed[2] is None and None not in claimed[:2]
    assert Duel.objects.filter(tournament=tournament, status=Status.RUNNING).count() == 2
    # A driver that died frees its slot once its lease expires; the claim takes the duel over.
    Duel.objects.filter(pk=claimed[0]).update(lease_expires_at=timezone.now()
                                              - timedelta(seconds=1))
    assert _claim_authoring(scope, "w3", 2) == claimed[0]
    # Authoring that ended (its episodes created, the lease cleared) no longer counts.
    Duel.objects.filter(pk=claimed[1]).update(lease_owner="", lease_expires_at=None)
    assert _claim_authoring(scope, "w3", 2) not in (None, *claimed)


def test_episodes_start_longest_first_as_their_environments_show_their_length(make):
    """The tournament ends with its last episode, so long ones should start early: an episode
    resumed after its worker died first, then one of an environment none of whose episodes has
    started (its length is the unknown), then those whose environment's episodes went furthest;
    the short ones fill the end."""
    duel = make.finished_duel()
    long, short, unknown = (make.environment(max_steps=30) for _ in range(3))
    stale = timezone.now() - timedelta(seconds=5)

    def pending(environment, **fields):
        return make.episode(duel=duel, environment=environment, status=Status.PENDING,
                            started_at=None, **fields)

    running = make.episode(duel=duel, environment=long, status=Status.RUNNING)
    Episode.objects.filter(pk=running.pk).update(steps=28)  # still running, 28 steps in
    finished = make.episode(duel=duel, environment=short)
    Episode.objects.filter(pk=finished.pk).update(steps=3)  # finished in 3
    order = [pending(short), pending(unknown), pending(long), pending(unknown)]
    resumed = make.episode(duel=duel, environment=short, status=Status.RUNNING,
                           lease_owner="gone", lease_expires_at=stale)
    candidates = [(e.pk, duel.pk, e.environment_id, 0, e.status)
                  for e in (*order, resumed)]
    assert [episode_id for episode_id, _ in _claim_order(candidates)] == [
        resumed.pk, order[1].pk, order[3].pk, order[2].pk, order[0].pk]
    # An earlier round still comes first, whatever its environments.
    later = [(e.pk, duel.pk, e.environment_id, 1, e.status) for e in order[1:3]]
    assert [episode_id for episode_id, _ in _claim_order([*later, candidates[0]])] == [
        order[0].pk, order[1].pk, order[2].pk]
