from __future__ import annotations

import numpy as np
import pytest

from duels.analytics.ratings import SCALE, cross_validated_accuracy, ratings_fit

TRUE_RATINGS = {"ada": 1300.0, "bo": 1150.0, "cy": 1000.0, "dee": 870.0, "eve": 750.0}


def sampled_games(rng: np.random.Generator, count: int) -> list[tuple[str, str, float]]:
    names = list(TRUE_RATINGS)
    games = []
    for _ in range(count):
        first, second = rng.choice(len(names), 2, replace=False)
        a, b = names[first], names[second]
        win = 1 / (1 + np.exp(-(TRUE_RATINGS[a] - TRUE_RATINGS[b]) / SCALE))
        games.append((a, b, float(rng.random() < win)))
    return games


def test_fitted_order_matches_planted_strengths_and_mean_is_the_anchor():
    fit = ratings_fit(players=list(TRUE_RATINGS), games=sampled_games(
        np.random.default_rng(7), 2000))
    by_rating = [fit.players[i] for i in np.argsort(-fit.rating)]
    assert by_rating == list(TRUE_RATINGS)
    assert fit.rating.mean() == pytest.approx(1000.0)
    assert fit.rank[fit.players.index("ada")] == 1
    assert sum(fit.duels) == 2 * 2000


def test_bootstrap_intervals_cover_the_truth_in_at_least_90_percent_of_50_repetitions():
    covered = []
    orders_match = 0
    for repetition in range(50):
        games = sampled_games(np.random.default_rng(1000 + repetition), 400)
        fit = ratings_fit(players=list(TRUE_RATINGS), games=games, resamples=200,
                          seed=repetition)
        truth = np.array([TRUE_RATINGS[name] for name in fit.players])
        truth = truth - truth.mean() + 1000
        covered.extend((fit.low <= truth) & (truth <= fit.high))
        orders_match += list(np.argsort(fit.rating)) == list(np.argsort(truth))
    assert np.mean(covered) >= 0.9
    assert orders_match >= 45


def test_ties_count_half_and_an_undefeated_player_stays_finite():
    games = [("a", "b", 1.0)] * 5 + [("b", "c", 0.5)] * 4 + [("c", "b", 0.5)] * 2
    fit = ratings_fit(players=["a", "b", "c"], games=games, resamples=50)
    rating = dict(zip(fit.players, fit.rating, strict=True))
    assert np.all(np.isfinite(fit.rating)) and np.all(np.isfinite(fit.high))
    assert rating["a"] > rating["c"] > rating["b"]
    assert fit.points[1, 2] == 3.0 and fit.points[2, 1] == 3.0


def test_only_draws_give_equal_ratings():
    fit = ratings_fit(players=["a", "b"], games=[("a", "b", 0.5)] * 6, resamples=50)
    assert list(fit.rating) == pytest.approx([1000.0, 1000.0])


def test_ranks_are_shared_when_intervals_overlap():
    games = [("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 0.0), ("b", "a", 0.0)]
    fit = ratings_fit(players=["a", "b"], games=games, resamples=100)
    assert fit.rank == [1, 1]


def test_no_games_gives_no_ratings():
    assert ratings_fit(players=["a"], games=[]) is None


def test_cross_validated_accuracy_beats_chance_on_strong_differences():
    accuracy, decisive = cross_validated_accuracy(
        games=sampled_games(np.random.default_rng(3), 600)
    )
    assert decisive == 600
    assert accuracy > 0.6


def test_too_few_duels_give_no_interval_rather_than_a_zero_width_one():
    one_duel = ratings_fit(players=["a", "b"], games=[("a", "b", 1.0)])
    assert one_duel.rating[0] > one_duel.rating[1]
    assert np.isnan(one_duel.low).all() and np.isnan(one_duel.high).all()

    games = [("a", "b", 1.0), ("a", "b", 0.5), ("b", "c", 1.0), ("a", "c", 1.0)]
    fit = ratings_fit(players=["a", "b", "c", "d"], games=[*games, ("c", "d", 0.0)])
    thin = fit.players.index("d")
    assert np.isnan(fit.low[thin]) and np.isnan(fit.high[thin])
    assert all(fit.low[i] <= fit.rating[i] <= fit.high[i] for i in range(3))
