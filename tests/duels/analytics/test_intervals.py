"""The interval helpers' own arithmetic: ranks with ties, and the small-sample widening."""

from __future__ import annotations

import numpy as np
import pytest

from duels.analytics.intervals import average_ranks, small_sample_factor
from duels.analytics.proportions import Z95


def test_average_ranks_are_scipys_rankdata_with_ties_along_the_last_axis():
    # scipy.stats is imported here only: importing it costs every test process a second.
    from scipy import stats

    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 40):
        values = rng.integers(0, 4, size=(30, size)).astype(float)  # many ties
        assert np.array_equal(average_ranks(values), stats.rankdata(values, axis=1))
        assert np.array_equal(average_ranks(values[0]), stats.rankdata(values[0]))
    assert average_ranks(np.array([0.5, -2.0, 0.5, 7.0])).tolist() == [2.5, 1.0, 2.5, 4.0]
    assert average_ranks(np.full(4, 3.0)).tolist() == [2.5] * 4
    assert average_ranks(np.zeros((3, 0))).shape == (3, 0)


def test_small_sample_factor_is_students_t_over_the_normal_quantile():
    from scipy import stats

    units = np.array([2, 5, 20, 1000])
    expected = np.sqrt(units / (units - 1)) * stats.t.ppf(0.975, units - 1) / Z95
    assert small_sample_factor(units) == pytest.approx(expected, rel=1e-12)
    assert small_sample_factor(units, rescaled=True) == pytest.approx(
        stats.t.ppf(0.975, units - 1) / Z95, rel=1e-12)
    assert round(float(small_sample_factor(np.array([5]))[0]), 2) == 1.58  # as documented
    assert np.isnan(small_sample_factor(np.array([0, 1]))).all()
