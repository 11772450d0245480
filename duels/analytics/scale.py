"""Model scale: does a player's size (billions of parameters) go with its setter strength and
with its observe-mode uplift? Spearman ρ over players, bootstrap intervals over players."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from duels.analytics.intervals import average_ranks, pearson_rows, percentile_interval

# Fewer players with a known size say nothing about scale: on four, the bootstrap interval of ρ
# covered 63-75% of planted truths and said `supported` on 3 of 40 tournaments without any
# relation (benchmarks/coverage_bench.py).
MIN_PLAYERS = 5


def spearman_with_interval(
    x: np.ndarray, y: np.ndarray, *, resamples: int, rng: np.random.Generator
) -> tuple[float | None, float | None, float | None]:
    """Spearman ρ and its bootstrap percentile interval (players resampled with replacement).

    A resample whose values are all tied has no ρ and is left out of the percentiles.
    """
    rho = float(pearson_rows(average_ranks(x), average_ranks(y)))
    if not np.isfinite(rho):
        return None, None, None
    draws = rng.integers(0, len(x), size=(resamples, len(x)))
    boot = pearson_rows(average_ranks(x[draws]), average_ranks(y[draws]))
    low, high = percentile_interval(boot[:, None])
    if not np.isfinite(low[0]):
        return rho, None, None
    return rho, float(low[0]), float(high[0])


def _paired(sizes: Mapping[str, float], values: Mapping[str, float | None]) -> tuple:
    names = sorted(name for name, value in values.items()
                   if value is not None and np.isfinite(value) and name in sizes)
    return (np.array([sizes[name] for name in names], dtype=float),
            np.array([values[name] for name in names], dtype=float))


def scale_fit(
    *,
    sizes: Mapping[str, float],
    setter_strength: Mapping[str, float | None],
    uplift: Mapping[str, float | None],
    resamples: int = 1000,
    seed: int = 0,
) -> dict | None:
    """ρ(size, setter strength) and ρ(size, observe uplift); None below `MIN_PLAYERS` players
    with a known size and a setter strength. The uplift figures are null below that many
    players with a known size and an uplift."""
    size_x, strength_y = _paired(sizes, setter_strength)
    if len(size_x) < MIN_PLAYERS:
        return None
    rng = np.random.default_rng(seed)
    rho, low, high = spearman_with_interval(size_x, strength_y, resamples=resamples, rng=rng)
    uplift_x, uplift_y = _paired(sizes, uplift)
    u_rho = u_low = u_high = None
    if len(uplift_x) >= MIN_PLAYERS:
        u_rho, u_low, u_high = spearman_with_interval(uplift_x, uplift_y, resamples=resamples,
                                                      rng=rng)
    return {
        "setter_spearman": rho, "low": low, "high": high,
        "uplift_spearman": u_rho, "u_low": u_low, "u_high": u_high,
        "n": len(size_x), "uplift_n": len(uplift_x),
        "method": f"Spearman ρ; bootstrap percentile interval, {resamples} resamples of players",
    }
