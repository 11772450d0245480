"""Transitivity of head-to-head results: majority matrix, cyclic triads, Kendall's ζ."""

from __future__ import annotations

from itertools import combinations

import numpy as np


def majority_matrix(points: np.ndarray) -> np.ndarray:
    """beats[i, j] is True when i scored more than half the points in its duels against j."""
    return points > points.T


def max_cyclic_triads(size: int) -> float:
    """The most cyclic triads a round robin of `size` players can have."""
    if size < 3:
        return 0.0
    if size % 2:
        return (size**3 - size) / 24
    return (size**3 - 4 * size) / 24


def transitivity_fit(points: np.ndarray) -> dict | None:
    """Cyclic triads, ζ and transitive share over triples whose three pairs were all decided.

    A pair is decided when one player won more points than the other. ζ = 1 − c / c_max is
    Kendall's coefficient of consistence (1 = perfectly transitive).
    """
    size = points.shape[0]
    if size < 3:
        return None
    beats = majority_matrix(points)
    decided = beats | beats.T
    cyclic = 0
    transitive = 0
    for i, j, k in combinations(range(size), 3):
        if not (decided[i, j] and decided[j, k] and decided[i, k]):
            continue
        wins = (beats[i, j] + beats[i, k], beats[j, i] + beats[j, k], beats[k, i] + beats[k, j])
        if wins == (1, 1, 1):
            cyclic += 1
        else:
            transitive += 1
    triples = cyclic + transitive
    if triples == 0:
        return None
    all_pairs = int(decided[np.triu_indices(size, k=1)].sum())
    return {
        "cyclic_triads": cyclic,
        "zeta": 1 - cyclic / max_cyclic_triads(size),
        "transitive_share": transitive / triples,
        "decided_triples": triples,
        "decided_pairs": all_pairs,
        "pairs": size * (size - 1) // 2,
    }
