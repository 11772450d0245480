"""Krippendorff's alpha: hand-computed cases, the bootstrap's coincidences against the package,
and a planted test of the interval's coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from duels.analytics.agreement import (
    Rating,
    agreement_compute,
    alpha_from_coincidences,
    alpha_interval,
    alpha_point,
    unit_coincidences,
)


def _ratings(rows: dict[str, tuple]) -> list[Rating]:
    return [Rating(item=item, annotator=f"annotator-{n}", value=value)
            for item, values in rows.items() for n, value in enumerate(values)
            if value is not None]


def test_nominal_alpha_by_hand():
    # Coincidences: o(a,a)=2, o(a,b)=o(b,a)=1, o(b,b)=2; n_a=n_b=3, n=6.
    # alpha = 1 − (n−1)·Σo·δ / Σ n_c·n_k·δ = 1 − 5·2 / (2·3·3) = 4/9.
    ratings = _ratings({"u1": ("a", "a"), "u2": ("a", "b"), "u3": ("b", "b")})
    assert alpha_point(ratings, "nominal") == pytest.approx(4 / 9)


def test_interval_alpha_by_hand():
    # Values 1,2 | 3,3 | 2,4: Σo·δ² = 1+1+4+4 = 10; Σ n_c·n_k·(c−k)² over ordered pairs = 66;
    # alpha = 1 − 5·10/66 = 8/33.
    ratings = _ratings({"u1": (1, 2), "u2": (3, 3), "u3": (2, 4)})
    assert alpha_point(ratings, "interval") == pytest.approx(8 / 33)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_the_bootstrap_formula_equals_the_package_on_the_data_itself(level):
    rng = np.random.default_rng(7)
    rows = {f"u{n}": tuple(int(v) if rng.random() > 0.15 else None
                           for v in rng.integers(1, 5, size=3)) for n in range(25)}
    ratings = _ratings(rows)
    matrices, values, _ = unit_coincidences(ratings, level)
    mine = alpha_from_coincidences(matrices.sum(axis=0)[None], values, level)[0]
    assert mine == pytest.approx(alpha_point(ratings, level))


def test_items_with_one_answer_and_one_valued_questions_give_no_alpha():
    assert alpha_point(_ratings({"u1": ("a", "a"), "u2": ("a", "a")}), "nominal") is None
    assert alpha_interval(_ratings({"u1": ("a",), "u2": ("b",)}), "nominal") == (None, None)
    same = agreement_compute(_ratings({"u1": ("a", "a"), "u2": ("a", "a")}), "nominal")
    assert same["reason"] == "every answer is the same: alpha is undefined"
    lonely = agreement_compute(_ratings({"u1": ("a",), "u2": ("b", "a")}), "nominal")
    assert lonely["reason"] == "needs two designs with two answers each"


def test_few_designs_give_alpha_but_no_interval():
    few = agreement_compute(_ratings({f"u{n}": ("a", "ab"[n % 2]) for n in range(4)}),
                            "nominal", resamples=50)
    assert few["alpha"] is not None and few["low"] is None
    assert few["reason"] == "an interval needs 5 designs with two answers each"
    enough = agreement_compute(_ratings({f"u{n}": ("a", "ab"[n % 2]) for n in range(6)}),
                               "nominal", resamples=50)
    assert enough["low"] <= enough["alpha"] <= enough["high"] and enough["reason"] == ""


def test_per_annotator_agreement_and_disagreements():
    result = agreement_compute(_ratings({"u1": ("a", "a", "b"), "u2": ("b", "b", "b")}),
                               "nominal", resamples=50)
    assert [row["annotator"] for row in result["annotators"]] == [
        "annotator-0", "annotator-1", "annotator-2"]
    # annotator-2 agrees with one of the four values it is paired with (u2: b, b).
    assert result["annotators"][2]["agreement"] == pytest.approx(2 / 4)
    assert [entry["item"] for entry in result["disagreements"]] == ["u1"]


def _planted_alpha(accuracy: float, categories: int, prior: list[float]) -> float:
    """Population alpha when each annotator reports the truth with probability `accuracy`,
    else a uniformly random category: 1 − P(two reports differ) / P(two random values differ)."""
    chance = (1 - accuracy) / categories
    same = (accuracy + chance) ** 2 + (categories - 1) * chance ** 2
    marginal = accuracy * np.asarray(prior) + chance
    return 1 - (1 - same) / (1 - float(np.sum(marginal ** 2)))


def test_planted_agreement_is_covered_by_the_95_percent_interval():
    """100 simulated queues (60 designs, 3 annotators of accuracy 0.7, 3 labels): the interval
    covers the planted alpha in at least 90 of them."""
    prior, accuracy = [0.5, 0.3, 0.2], 0.7
    planted = _planted_alpha(accuracy, len(prior), prior)
    assert 0.3 < planted < 0.7
    covered = 0
    for simulation in range(100):
        rng = np.random.default_rng(simulation)
        truth = rng.choice(len(prior), size=60, p=prior)
        ratings = [Rating(item=str(item), annotator=str(annotator),
                          value=int(label if rng.random() < accuracy
                                    else rng.integers(len(prior))))
                   for item, label in enumerate(truth) for annotator in range(3)]
        low, high = alpha_interval(ratings, "nominal", resamples=400, seed=simulation)
        assert low is not None and not math.isnan(low)
        covered += low <= planted <= high
    print(f"planted alpha {planted:.3f} covered in {covered}/100 simulations")
    assert covered >= 90
