"""Transitivity of head-to-head results over decided triples: cyclic triads, Kendall's ζ and the
transitive share, with a bootstrap interval for the share.

A pair of players is *decided* when one scored more points than the other in their duels (draws
count half). A triple is decided when all three of its pairs are. Over the T decided triples:
- cyclic triads c: decided triples where each player beats exactly one other (A > B > C > A);
- transitive share = (T − c) / T (a random tournament gives 0.75);
- Kendall's ζ = 1 − c / c_max, where c_max is the most cyclic triads possible among n players
  scaled to the decided share, c_max(n) · T / C(n, 3); floored at 0. With every pair decided
  this is Kendall's coefficient of consistence.
"""

from __future__ import annotations

from math import comb

import numpy as np

from duels.analytics.intervals import percentile_interval

CHANCE_SHARE = 0.75  # expected transitive share of a random tournament


def majority_matrix(points: np.ndarray) -> np.ndarray:
    """beats[..., i, j] is True when i scored more than half the points in its duels against j."""
    return points > np.swapaxes(points, -1, -2)


def max_cyclic_triads(size: int) -> float:
    """The most cyclic triads a round robin of `size` players can have."""
    if size < 3:
        return 0.0
    if size % 2:
        return (size**3 - size) / 24
    return (size**3 - 4 * size) / 24


def triad_counts(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cyclic triads, decided triples) of one points matrix (n, n) or a batch (r, n, n).

    A directed 3-cycle appears three times on the diagonal of beats³; a triple of decided
    pairs six times on the diagonal of decided³.
    """
    beats = majority_matrix(points).astype(float)
    decided = np.clip(beats + np.swapaxes(beats, -1, -2), 0, 1)
    cyclic = np.trace(beats @ beats @ beats, axis1=-2, axis2=-1) / 3
    triples = np.trace(decided @ decided @ decided, axis1=-2, axis2=-1) / 6
    return np.rint(cyclic), np.rint(triples)


def transitivity_fit(points: np.ndarray, boot_points: np.ndarray | None = None) -> dict | None:
    """Cyclic triads, ζ and transitive share over decided triples; None without one.

    `boot_points` (resamples, n, n) are the points matrices of bootstrap resamples of the duels;
    the share's interval is their 2.5th–97.5th percentile.
    """
    size = points.shape[0]
    if size < 3:
        return None
    cyclic, triples = (int(value) for value in triad_counts(points))
    if triples == 0:
        return None
    beats = majority_matrix(points)
    decided = beats | beats.T
    scaled_max = max_cyclic_triads(size) * triples / comb(size, 3)
    result = {
        "cyclic_triads": cyclic,
        "zeta": max(0.0, 1 - cyclic / scaled_max) if scaled_max else None,
        "transitive_share": (triples - cyclic) / triples,
        "share_low": None,
        "share_high": None,
        "share_method": None,
        "decided_triples": triples,
        "triples": comb(size, 3),
        "decided_pairs": int(decided[np.triu_indices(size, k=1)].sum()),
        "pairs": size * (size - 1) // 2,
        "definition": "over decided triples (all three pairs decided by a points majority): "
                      "share = (T − c) / T, ζ = 1 − c / (c_max(n) · T / C(n,3)), floored at 0",
    }
    if boot_points is not None and len(boot_points):
        boot_cyclic, boot_triples = triad_counts(boot_points)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = np.where(boot_triples > 0, (boot_triples - boot_cyclic) / boot_triples,
                              np.nan)
        low, high = percentile_interval(shares[:, None])
        if np.isfinite(low[0]):
            result.update(share_low=float(low[0]), share_high=float(high[0]),
                          share_method=f"bootstrap percentile, {len(boot_points)} resamples of "
                                       "whole duels")
    return result
