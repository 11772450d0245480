"""When a leaderboard ranks: a player needs an interval and MIN_DUELS_TO_RANK duels; early in a
tournament (two duels each) nobody shares a meaningless first place."""

from __future__ import annotations

from duels.analytics.ranking_rule import MIN_DUELS_TO_RANK
from duels.analytics.ratings import ratings_fit
from duels.selectors.dashboard import leaderboard_split


def test_two_duels_each_rank_nobody_and_list_everyone_apart():
    # Four players, two duels each: intervals exist but say little.
    games = [("p1", "p2", 1.0), ("p3", "p4", 1.0), ("p1", "p3", 0.0), ("p2", "p4", 0.5)]
    result = ratings_fit(players=["p1", "p2", "p3", "p4"], games=games, resamples=100)
    assert all(count == 2 for count in result.duels)
    assert result.rank == [None, None, None, None]
    rows = [{"player": name, "rank": rank, "duels": duels}
            for name, rank, duels in zip(result.players, result.rank, result.duels, strict=True)]
    split = leaderboard_split(rows)
    assert split["ratings"] == [] and len(split["unranked"]) == 4


def test_enough_duels_rank():
    players = ["p1", "p2", "p3"]
    games = [(a, b, 1.0 if a < b else 0.0) for _ in range(MIN_DUELS_TO_RANK)
             for a, b in (("p1", "p2"), ("p2", "p3"), ("p1", "p3"))]
    result = ratings_fit(players=players, games=games, resamples=100)
    assert all(rank is not None for rank in result.rank)
    assert leaderboard_split([{"player": p, "rank": r} for p, r in zip(
        result.players, result.rank, strict=True)])["unranked"] == []
