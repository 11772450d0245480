"""Interval helpers shared by the analytics modules: Wilson, Newcombe, bootstrap draws."""

from __future__ import annotations

import math

import numpy as np

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


def bootstrap_counts(rng: np.random.Generator, size: int, resamples: int) -> np.ndarray:
    """How often each of `size` units is drawn in each resample: an array (resamples, size)."""
    if size == 0:
        return np.zeros((resamples, 0))
    draws = rng.integers(0, size, size=(resamples, size))
    flat = (draws + np.arange(resamples)[:, None] * size).ravel()
    return np.bincount(flat, minlength=resamples * size).reshape(resamples, size).astype(float)


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis (NaN where either side is constant); on ranks, Spearman ρ."""
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((x * x).sum(axis=-1) * (y * y).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (x * y).sum(axis=-1) / np.where(
            denominator > 0, denominator, 1), np.nan)


def percentile_interval(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2.5% and 97.5% percentiles along axis 0, ignoring NaN (NaN where nothing is finite)."""
    if samples.shape[0] == 0:
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan
    finite = np.isfinite(samples)
    masked = np.where(finite, samples, np.nan)
    low = np.full(samples.shape[1:], np.nan)
    high = np.full(samples.shape[1:], np.nan)
    any_finite = finite.any(axis=0)
    if np.any(any_finite):
        low[any_finite] = np.nanpercentile(masked[:, any_finite], 2.5, axis=0)
        high[any_finite] = np.nanpercentile(masked[:, any_finite], 97.5, axis=0)
    return low, high


def clean(value: float | None, digits: int = 4) -> float | None:
    """A JSON-safe rounded float, or None for missing / not finite."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return round(value, digits)
