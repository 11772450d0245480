"""Divergence of the setter and solver rankings: Kendall τ-b and P(top solver ≠ top setter)."""

from __future__ import annotations

import numpy as np

from duels.analytics.intervals import percentile_interval


def kendall_tau_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall τ-b between x and y along the last axis; pairs with a NaN are left out.

    Works on one ranking pair (1-D) or on a batch of bootstrap draws (2-D), all in numpy.
    """
    x = np.atleast_2d(x)
    y = np.atleast_2d(y)
    first, second = np.triu_indices(x.shape[-1], k=1)
    dx = np.sign(x[:, first] - x[:, second])
    dy = np.sign(y[:, first] - y[:, second])
    usable = np.isfinite(dx) & np.isfinite(dy)
    dx = np.where(usable, dx, 0.0)
    dy = np.where(usable, dy, 0.0)
    denominator = np.sqrt(np.abs(dx).sum(axis=1) * np.abs(dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=1) / np.where(
            denominator > 0, denominator, 1), np.nan)


def divergence_fit(
    *,
    setter_score: np.ndarray,
    pass_rate: np.ndarray,
    setter_boot: np.ndarray,
    solver_boot: np.ndarray,
) -> dict | None:
    """τ between setter and solver strength over players measured in both roles, with an interval
    from τ of each bootstrap draw.

    The draws are strength_fit's widened ones (the corrected duel bootstrap): τ of the plain
    draws covered 85–90% of planted τ, too narrow for the same reason the strengths were. The
    interval is their plain percentile interval: τ of noisy rankings is pulled toward 0 in the
    draws as in the estimate, and a bias-corrected (BC) interval, which re-centres on the
    estimate, covered only 65–90% (benchmarks/coverage_bench.py). A player whose draws are all
    missing (a single duel in a role) has no measured uncertainty and is left out.
    """
    both = (np.isfinite(setter_score) & np.isfinite(pass_rate)
            & np.isfinite(setter_boot).any(axis=0) & np.isfinite(solver_boot).any(axis=0))
    if both.sum() < 2:
        return None
    tau = float(kendall_tau_rows(setter_score[both], pass_rate[both])[0])
    boot_tau = kendall_tau_rows(setter_boot[:, both], solver_boot[:, both])
    low, high = percentile_interval(boot_tau[:, None])
    top_setter = np.argmax(np.where(np.isfinite(setter_boot[:, both]), setter_boot[:, both],
                                    -np.inf), axis=1)
    top_solver = np.argmax(np.where(np.isfinite(solver_boot[:, both]), solver_boot[:, both],
                                    -np.inf), axis=1)
    return {
        "kendall_tau": tau,
        "low": float(low[0]),
        "high": float(high[0]),
        "p_top_differs": float(np.mean(top_setter != top_solver)) if len(top_setter) else None,
        "players": int(both.sum()),
    }
