"""Observe-mode uplift: a setter's mean setter score in observe duels minus non-observe duels."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from duels.analytics.intervals import bootstrap_counts, percentile_interval
from duels.analytics.sides import Side


def _boot_means(values: list[float], rng: np.random.Generator, resamples: int) -> np.ndarray:
    counts = bootstrap_counts(rng, len(values), resamples)
    return counts @ np.array(values) / len(values)


def observe_uplift(*, sides: Sequence[Side], resamples: int = 200, seed: int = 0) -> list[dict]:
    """One row per setter that has sides in observe duels; uplift interval by bootstrap.

    The two groups are resampled independently; the interval is the percentile interval of
    the difference of means. It is null when the setter has no non-observe sides to compare.
    """
    groups: dict[str, dict[bool, list[float]]] = defaultdict(lambda: {True: [], False: []})
    for side in sides:
        groups[side.setter][side.observe].append(side.setter_score)
    rng = np.random.default_rng(seed)
    rows = []
    for setter in sorted(groups):
        on, off = groups[setter][True], groups[setter][False]
        if not on:
            continue
        row = {"player": setter, "on": float(np.mean(on)),
               "off": float(np.mean(off)) if off else None, "low": None, "high": None,
               "uplift": None, "n_on": len(on), "n_off": len(off)}
        if off:
            difference = _boot_means(on, rng, resamples) - _boot_means(off, rng, resamples)
            low, high = percentile_interval(difference[:, None])
            row.update(uplift=row["on"] - row["off"], low=float(low[0]), high=float(high[0]))
        rows.append(row)
    return rows
