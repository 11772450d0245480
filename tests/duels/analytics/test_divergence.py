from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from duels.analytics.divergence import divergence_fit, kendall_tau_rows


def test_identical_rankings_give_tau_one_and_the_same_top_player():
    setter = np.array([0.1, 0.5, 0.3, 0.9])
    solver = np.array([0.2, 0.6, 0.4, 0.95])
    boot = np.tile(setter, (200, 1))
    result = divergence_fit(setter_score=setter, pass_rate=solver, setter_boot=boot,
                            solver_boot=np.tile(solver, (200, 1)))
    assert result["kendall_tau"] == 1.0
    assert result["low"] == result["high"] == 1.0
    assert result["p_top_differs"] == 0.0


def test_reversed_rankings_give_minus_one_and_a_different_top():
    setter = np.array([0.1, 0.2, 0.3])
    solver = np.array([0.9, 0.8, 0.7])
    result = divergence_fit(setter_score=setter, pass_rate=solver,
                            setter_boot=np.tile(setter, (10, 1)),
                            solver_boot=np.tile(solver, (10, 1)))
    assert result["kendall_tau"] == -1.0
    assert result["p_top_differs"] == 1.0


def test_tau_b_with_ties_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 12).astype(float)
    y = rng.integers(0, 4, 12).astype(float)
    assert kendall_tau_rows(x, y)[0] == pytest.approx(stats.kendalltau(x, y).statistic)


def test_players_missing_in_one_role_are_left_out():
    setter = np.array([0.1, np.nan, 0.3])
    solver = np.array([0.1, 0.5, np.nan])
    assert divergence_fit(setter_score=setter, pass_rate=solver,
                          setter_boot=np.tile(setter, (5, 1)),
                          solver_boot=np.tile(solver, (5, 1))) is None
