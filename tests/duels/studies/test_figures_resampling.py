"""The study intervals' parts: strata, bootstrap counts, the linearised variance and the
collapsed domains that keep a figure the same."""

from __future__ import annotations

import numpy as np
import pytest

from duels.studies.figures_models import balanced
from duels.studies.figures_resampling import (
    CELL_MIN,
    author_strata,
    group_sums,
    linearised_variance,
    solver_strata,
    stratified_counts,
    studentized_interval,
)


def test_collapsed_domains_leave_an_authors_figure_unchanged():
    # One author: 5 environments in "a", 2 in "b", 1 in "c", 3 in "d" (b, c, d are small).
    domains = ["a"] * 5 + ["b"] * 2 + ["c"] + ["d"] * 3
    strata = author_strata(domains, ["x"] * len(domains))
    assert len(set(strata.strata[:5])) == 1 and len(set(strata.strata[5:])) == 1
    assert strata.strata[0] != strata.strata[5]
    assert sorted(strata.group_weight.tolist()) == [1.0, 3.0]
    values = np.random.default_rng(0).random((1, len(domains)))
    mask = np.ones_like(values, dtype=bool)
    index = {d: i for i, d in enumerate("abcd")}
    plain, _, _ = balanced(values, mask, np.array([index[d] for d in domains]), 4,
                           np.ones((1, len(domains))))
    grouped, _, _ = balanced(values, mask, strata.groups, len(strata.group_weight),
                             np.ones((1, len(domains))), strata.group_weight,
                             strata.unit_weight)
    by_domain = [np.mean([v for v, d in zip(values[0], domains, strict=True) if d == x])
                 for x in "abcd"]
    assert plain[0, 0] == pytest.approx(np.mean(by_domain))
    assert grouped[0, 0] == pytest.approx(plain[0, 0])
    assert CELL_MIN == 4


def test_a_lone_small_domain_keeps_its_own_stratum_and_solvers_pool_single_authors():
    strata = author_strata(["a"] * 4 + ["b"], ["x"] * 5)
    assert len(set(strata.strata)) == 2 and strata.group_weight.tolist() == [1.0, 1.0]
    # In "grid" three authors with one environment each; in "words" p wrote four, q two.
    solver = solver_strata(["grid"] * 3 + ["words"] * 6, ["p", "q", "r"] + ["p"] * 4 + ["q"] * 2)
    assert len(set(solver[:3])) == 1 and len(set(solver[3:7])) == 1
    assert len(set(solver.tolist())) == 3


def test_bootstrap_counts_redraw_each_stratum_whole():
    strata = np.array([0, 0, 0, 1, 1, 2])
    counts = stratified_counts(np.random.default_rng(1), strata, 500)
    assert set(counts[:, :3].sum(axis=1)) == {3} and set(counts[:, 3:5].sum(axis=1)) == {2}
    assert set(counts[:, 5]) == {1}  # a stratum of one always redraws itself


def test_group_sums_agree_sorted_or_not_and_the_variance_of_a_mean_is_s2_over_n():
    values = np.random.default_rng(2).random((3, 2, 7))
    groups = np.array([2, 0, 1, 0, 2, 2, 1])
    order = np.argsort(groups, kind="stable")
    assert np.allclose(group_sums(values, groups, 4), group_sums(values[..., order],
                                                                 groups[order], 4))
    x = np.array([1.0, 2.0, 4.0, 8.0, 5.0])
    influence = ((x - x.mean()) / len(x))[None, None, :]
    variance = linearised_variance(influence, np.ones((1, 5)), np.zeros(5, dtype=np.int64))
    assert variance[0, 0] == pytest.approx(x.var(ddof=1) / len(x))


def test_the_studentized_interval_holds_its_estimate_and_needs_a_spread():
    rng = np.random.default_rng(3)
    figure = np.concatenate([[[0.5]], 0.5 + rng.normal(0, 0.05, (200, 1))])
    variance = np.full((201, 1), 0.05 ** 2)
    low, high = studentized_interval(figure, variance, np.array([10]), bounds=(0.0, 1.0))
    assert low[0] < 0.5 < high[0]
    low, high = studentized_interval(figure, np.zeros((201, 1)), np.array([10]),
                                     bounds=(0.0, 1.0))
    assert np.isnan(low[0]) and np.isnan(high[0])  # no spread: unknown, not zero
