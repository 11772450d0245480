"""The whole-queue agreement from counts per item gives the per-rating figures of agreement.py:
alpha equal to the `krippendorff` package's, each annotator's agreement, the disputed items, and
intervals equal to the coincidence matrices' under the same bootstrap draws."""

from __future__ import annotations

import random

import numpy as np
import pytest

from duels.analytics.agreement import (
    Rating,
    agreement_compute,
    alpha_from_coincidences,
    unit_coincidences,
)
from duels.analytics.agreement_batch import queue_part_figures
from duels.analytics.agreement_codes import answers_code
from duels.analytics.intervals import bootstrap_counts
from duels.selectors.agreement import measured_parts

QUESTIONS = [
    {"key": "s", "kind": "scale", "prompt": "S", "scale_max": 5, "level": "ordinal"},
    {"key": "i", "kind": "scale", "prompt": "I", "scale_max": 5, "level": "interval"},
    {"key": "m", "kind": "multi", "prompt": "M", "labels": ["x", "y", "z"]},
    {"key": "y", "kind": "yesno", "prompt": "Y"},
    {"key": "c", "kind": "single", "prompt": "C", "labels": ["p", "q", "r"]},
    {"key": "w", "kind": "multi", "prompt": "W", "labels": ["x", "v"]},
]


class _Rubric:
    def __init__(self, questions):
        self.questions = questions


def _answer(rng: random.Random, questions, missing: float) -> dict:
    """Values as this installation writes them, with the strays an import may bring."""
    values = {}
    for question in questions:
        if rng.random() < missing:
            continue
        kind = question["kind"]
        if kind == "multi":
            chosen = [label for label in question["labels"] if rng.random() < 0.4]
            if rng.random() < 0.05:
                chosen += chosen[:1] + ["stray"]
            values[question["key"]] = chosen if rng.random() > 0.03 else "not a list"
        elif kind == "scale":
            values[question["key"]] = rng.randint(1, question["scale_max"])
        elif kind == "yesno":
            values[question["key"]] = rng.random() < 0.6
        else:
            values[question["key"]] = rng.choice(question["labels"]) if rng.random() > 0.03 \
                else [1]
    return values


def _ratings(rows, part) -> list[Rating]:
    """The part's ratings as the per-rating path reads them, in answer order."""
    ratings = []
    for item, annotator, values in rows:
        value = values.get(part["key"]) if isinstance(values, dict) else None
        if part["label"] is not None:
            value = isinstance(value, list) and part["label"] in value
        elif value is None or isinstance(value, list | dict):
            continue
        ratings.append(Rating(item=item, annotator=annotator, value=value))
    return ratings


def _interval(ratings, level, items: list[str], resamples: int, seed: int):
    """The interval from the items' coincidence matrices, drawn as the queue draws them."""
    matrices, values, pairable = unit_coincidences(ratings, level)
    order = np.argsort([items.index(item) for item in pairable], kind="stable")
    draws = bootstrap_counts(np.random.default_rng(seed), len(pairable), resamples)
    alphas = alpha_from_coincidences(np.tensordot(draws.astype(float), matrices[order], axes=1),
                                     values, level)
    return tuple(np.percentile(alphas[np.isfinite(alphas)], [2.5, 97.5]))


@pytest.mark.parametrize("trial", range(8))
def test_a_random_queues_figures_equal_the_per_rating_ones(trial):
    rng = random.Random(trial)
    questions = QUESTIONS[:]
    rng.shuffle(questions)
    parts = measured_parts(_Rubric(questions))
    missing = rng.choice([0.0, 0.1, 0.4])
    rows = [(f"item-{item:02d}", annotator, _answer(rng, questions, missing))
            for item in range(rng.choice([3, 8, 30, 60]))
            for annotator in rng.sample([f"a{n}" for n in range(6)], rng.randint(1, 5))]
    rng.shuffle(rows)
    codes = answers_code(rows=iter(rows), parts=parts, total=len(rows))
    figures, disputed = queue_part_figures(codes=codes, levels=[p["level"] for p in parts],
                                           resamples=300)
    seeds: dict[frozenset, int] = {}
    for number, (part, got) in enumerate(zip(parts, figures, strict=True)):
        ratings = _ratings(rows, part)
        expected = agreement_compute(ratings, part["level"])
        for key in ("level", "pairable", "items", "values", "reason"):
            assert got[key] == expected[key], (part, key)
        if expected["alpha"] is None:
            assert got["alpha"] is None
        else:
            assert got["alpha"] == pytest.approx(expected["alpha"], abs=1e-9)
        assert [(row["annotator"], row["pairs"]) for row in got["annotators"]] == [
            (row["annotator"], row["pairs"]) for row in expected["annotators"]]
        assert [row["agreement"] for row in got["annotators"]] == pytest.approx(
            [row["agreement"] for row in expected["annotators"]])
        assert {codes.items[i] for i in np.flatnonzero(disputed[number])} == {
            entry["item"] for entry in expected["disagreements"]}
        pairable = frozenset(unit_coincidences(ratings, part["level"])[2])
        seed = seeds.setdefault(pairable, number)  # parts with the same items share draws
        if got["low"] is None:
            assert expected["low"] is None or got["alpha"] is None
            continue
        low, high = _interval(ratings, part["level"], codes.items, 300, seed)
        assert (got["low"], got["high"]) == pytest.approx((low, high), abs=1e-9)
