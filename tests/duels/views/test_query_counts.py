"""Every list and detail page makes the same number of queries with little or lots of data."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from duels.models import Annotation, Status

pytestmark = pytest.mark.django_db


def build(make, owner, *, duels: int, steps: int) -> dict:
    """`duels` finished duels among a fixed set of players, a running tournament holding them,
    and one long episode of `steps` steps."""
    players = [make.player() for _ in range(3)]
    tournament = make.tournament(players=players, status=Status.RUNNING, duels_total=duels)
    made = [
        make.finished_duel(a=players[i % 3], b=players[(i + 1) % 3], tournament=tournament)
        for i in range(duels)
    ]
    environment = made[0].env_a
    Annotation.objects.create(target_kind="environment", environment=environment,
                              author=owner, tags=["elegant"])
    long_episode = make.episode(environment=environment, solver=players[1], steps=steps)
    return {
        "/": None,
        "/players/": None,
        f"/players/{players[0].uuid}/": None,
        "/environments/": None,
        "/environments/?tag=elegant&gain_min=0": None,
        f"/environments/{environment.uuid}/": None,
        "/duels/": None,
        "/duels/?q=yes": None,
        f"/duels/{made[0].uuid}/": None,
        f"/episodes/{long_episode.uuid}/": None,
        f"/episodes/{long_episode.uuid}/?from=5": None,
        f"/episodes/{made[0].episodes.first().uuid}/compare/": None,
        "/tournaments/": None,
        f"/tournaments/{tournament.uuid}/": None,
    }


def count_queries(client, urls) -> list[int]:
    counts = []
    for url in urls:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200, url
        counts.append(len(captured))
    return counts


@pytest.mark.slow
def test_query_counts_do_not_grow_with_data(owner_client, owner, make):
    small = build(make, owner, duels=2, steps=10)
    small_counts = count_queries(owner_client, small)
    large = build(make, owner, duels=12, steps=300)
    large_counts = count_queries(owner_client, large)
    for url, few, many in zip(large, small_counts, large_counts, strict=True):
        assert few == many, f"{url}: {few} queries with little data, {many} with more"
