"""The work loop's bounds: in-flight work depends on the concurrency, never on the schedule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from duels.engine.scheduler import _claim_authoring, _Scope, authoring_limit
from duels.engine.tournaments import tournament_create
from duels.models import Duel, Status

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("concurrency", "expected"), [(1, 1), (4, 2), (12, 3), (16, 4), (40, 10)])
def test_authoring_gets_a_small_bound_of_its_own(concurrency, expected):
    assert authoring_limit(concurrency) == expected


def test_authoring_claims_stop_at_the_limit_across_drivers(make):
    tournament = tournament_create(players=[make.player() for _ in range(4)], rounds=4,
                                   attempts=1, concurrency=8)
    scope = _Scope(tournament=tournament, duel=None)
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
