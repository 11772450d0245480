"""Intervals of pass rates and of their differences (Wilson, Newcombe): plain arithmetic, so the
pages that show them need not import numpy."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: float, trials: float, *, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_difference(
    successes_1: float, trials_1: float, successes_2: float, trials_2: float
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 − p2 (independent samples)."""
    p1 = successes_1 / trials_1
    p2 = successes_2 / trials_2
    low_1, high_1 = wilson_interval(successes_1, trials_1)
    low_2, high_2 = wilson_interval(successes_2, trials_2)
    difference = p1 - p2
    low = difference - math.sqrt((p1 - low_1) ** 2 + (high_2 - p2) ** 2)
    high = difference + math.sqrt((high_1 - p1) ** 2 + (p2 - low_2) ** 2)
    return max(-1.0, low), min(1.0, high)
