"""The whole-queue agreement on coded arrays gives the per-rating figures of agreement.py."""

from __future__ import annotations

import numpy as np
import pytest

from duels.analytics.agreement import Rating, agreement_compute
from duels.analytics.agreement_batch import part_agreement


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_coded_figures_equal_the_per_rating_ones(level):
    rng = np.random.default_rng(11)
    values = [1, 2, 3, 4]
    ratings = [Rating(item=f"u{item:02d}", annotator=f"a{annotator}",
                      value=int(rng.integers(1, 5)))
               for item in range(40) for annotator in range(3) if rng.random() > 0.1]
    items = sorted({r.item for r in ratings})
    annotators = sorted({r.annotator for r in ratings})
    coded = part_agreement(
        item_of=np.array([items.index(r.item) for r in ratings]),
        annotator_of=np.array([annotators.index(r.annotator) for r in ratings]),
        codes=np.array([values.index(r.value) for r in ratings], dtype=np.int16),
        values=values, level=level, items=len(items), annotators=annotators,
        resamples=2000, seed=1)
    expected = agreement_compute(ratings, level, resamples=2000, seed=1)
    assert coded["alpha"] == pytest.approx(expected["alpha"])
    assert coded["low"] == pytest.approx(expected["low"], abs=0.05)
    assert coded["high"] == pytest.approx(expected["high"], abs=0.05)
    assert [(row["annotator"], row["pairs"]) for row in coded["annotators"]] == [
        (row["annotator"], row["pairs"]) for row in expected["annotators"]]
    assert [row["agreement"] for row in coded["annotators"]] == pytest.approx(
        [row["agreement"] for row in expected["annotators"]])
    assert [items[i] for i in coded["disputed"]] == sorted(
        entry["item"] for entry in expected["disagreements"])
    assert (coded["pairable"], coded["items"], coded["values"], coded["reason"]) == (
        expected["pairable"], expected["items"], expected["values"], expected["reason"])
