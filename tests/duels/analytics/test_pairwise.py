"""Human preference between designs: the duel ratings' Bradley–Terry fit on pairwise choices."""

from __future__ import annotations

import numpy as np
import pytest

from duels.analytics.pairwise import pairwise_ranking
from duels.analytics.ratings import ratings_fit


def _judgments(strength: dict[str, float], rounds: int, seed: int) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    names = sorted(strength)
    out = []
    for _ in range(rounds):
        for i, left in enumerate(names):
            for right in names[i + 1:]:
                p = 1 / (1 + np.exp(strength[right] - strength[left]))
                out.append((left, right, "a" if rng.random() < p else "b"))
    return out


def test_ranking_is_the_duel_ratings_fit_and_orders_planted_strengths():
    strength = {"d1": 2.0, "d2": 1.0, "d3": 0.0, "d4": -1.5}
    judgments = _judgments(strength, rounds=12, seed=1)
    measured = {"d1": {"hint_gain": 0.5, "training_value": 0.6},
                "d2": {"hint_gain": 0.3, "training_value": 0.4},
                "d3": {"hint_gain": 0.2, "training_value": None},
                "d4": {"hint_gain": -0.1, "training_value": 0.1}}
    ranking = pairwise_ranking(judgments=judgments, measured=measured, resamples=200, seed=0)
    assert [row["design"] for row in ranking["rows"]] == ["d1", "d2", "d3", "d4"]
    fit = ratings_fit(players=(), games=[(a, b, 1.0 if c == "a" else 0.0)
                                         for a, b, c in judgments], resamples=200, seed=0)
    by_name = dict(zip(fit.players, fit.rating, strict=True))
    for row in ranking["rows"]:
        assert row["rating"] == pytest.approx(by_name[row["design"]])
        assert row["low"] < row["rating"] < row["high"]
    hint = ranking["correlations"]["hint_gain"]
    assert hint["spearman"] == pytest.approx(1.0) and hint["n"] == 4
    assert ranking["correlations"]["training_value"]["n"] == 3


def test_ties_count_half_and_no_judgments_give_nothing():
    assert pairwise_ranking(judgments=[], measured={}) is None
    ranking = pairwise_ranking(judgments=[("x", "y", "tie")] * 4, measured={}, resamples=50)
    ratings = {row["design"]: row["rating"] for row in ranking["rows"]}
    assert ratings["x"] == pytest.approx(ratings["y"])
    assert ranking["correlations"]["hint_gain"] is None


def test_the_batched_rank_correlation_is_spearmans():
    from scipy.stats import spearmanr

    from duels.analytics.pairwise import _row_spearman

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 4, (20, 7)).astype(float), rng.normal(size=(20, 7))
    expected = [spearmanr(a, b).statistic for a, b in zip(x, y, strict=True)]
    assert _row_spearman(x, y) == pytest.approx(expected, nan_ok=True)
