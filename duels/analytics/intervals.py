"""Interval helpers shared by the analytics modules: Wilson, Newcombe, bootstrap draws, and the
small-sample correction of the duel bootstrap."""

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


def basic_interval(estimate: np.ndarray, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The basic (reflected) bootstrap interval per column: 2·estimate − the 97.5% and 2.5%
    percentiles. Where refits push the draws away from the estimate in the direction the fit
    pushed the estimate away from the truth, reflecting undoes that shift instead of doubling it.
    """
    low, high = percentile_interval(draws)
    return 2 * estimate - high, 2 * estimate - low


def small_sample_factor(units: np.ndarray, *, rescaled: bool = False) -> np.ndarray:
    """How much wider than the plain bootstrap spread a 95% interval over n resampled units must
    be: sqrt(n / (n − 1)) · t(n − 1, 0.975) / z(0.975); NaN below two units.

    A figure resting on a player's n duels is, in effect, a mean over n units. The bootstrap's
    spread of such a mean is the plug-in s²/n with s² divided by n instead of n − 1, a variance
    (n − 1)/n too small, and its 2.5–97.5% quantiles stand where a normal's do, while a mean of
    n units with an estimated spread needs Student's t quantile with n − 1 degrees of freedom.
    For n = 5 the two together make 1.58 times the width; for n = 20, 1.09. Whole duels are
    resampled from the whole tournament, so Rao–Wu's rescaling of the total count (n − 1 draws
    of n, as the joint model does within each author) cannot reach a single player's n.
    With `rescaled` the draws already have the unbiased variance (Rao–Wu within the player's
    stratum, as the Author rating's): only Student's t remains, t(n − 1, 0.975) / z.
    """
    # Imported here: pages import this module, and scipy takes seconds. Student's t quantile
    # straight from scipy.special (what scipy.stats.t.ppf computes, without importing the
    # distributions, a second of CPU in each process).
    from scipy.special import stdtrit

    n = np.asarray(units, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = (1.0 if rescaled else np.sqrt(n / (n - 1))) * stdtrit(
            np.maximum(n - 1, 1), 0.975) / Z95
    return np.where(n >= 2, factor, np.nan)


def widened_draws(estimate: np.ndarray, draws: np.ndarray, units: np.ndarray, *,
                  bounds: tuple[float, float] | None = None,
                  rescaled: bool = False) -> np.ndarray:
    """The corrected duel bootstrap: each column's draws (resamples, figures) moved away from its
    estimate by `small_sample_factor(units)`, then held inside `bounds` (a rate cannot leave
    [0, 1]). Quantiles of the result are the plain bootstrap's widened by that factor, keeping
    their skew; a statistic of several figures (Kendall τ of two rankings, who is on top) computed
    draw by draw from them inherits the correction. NaN where a figure rests on fewer than two
    units: one duel shows no spread, so its uncertainty is unknown, not zero.
    """
    widened = estimate + small_sample_factor(units, rescaled=rescaled) * (draws - estimate)
    if bounds is not None:
        widened = np.clip(widened, *bounds)
    return widened


def _column_quantiles(samples: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Each column's quantile at its own level, ignoring NaN (linear interpolation)."""
    ordered = np.sort(samples, axis=0)  # NaN sort last
    finite = np.isfinite(samples).sum(axis=0)
    position = levels * np.maximum(finite - 1, 0)
    below = np.floor(position).astype(int)
    above = np.minimum(below + 1, np.maximum(finite - 1, 0))
    columns = np.arange(samples.shape[1])
    fraction = position - below
    value = ((1 - fraction) * ordered[below, columns] + fraction * ordered[above, columns])
    return np.where(finite > 0, value, np.nan)


def bias_corrected_interval(estimate: np.ndarray,
                            draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Efron's bias-corrected (BC) percentile interval per column of `draws` (resamples, figures).

    When a fitted estimate is biased, its bootstrap draws are biased again about it, so the plain
    percentile interval stands off-centre by the bias: z0 = Φ⁻¹(share of draws below the
    estimate) measures that and moves both percentiles to Φ(2·z0 ∓ 1.96). z0 is held within
    ±1.96, which keeps the estimate inside its interval. NaN where a column has no finite draw.
    """
    # Φ⁻¹ and Φ from scipy.special (as in small_sample_factor).
    from scipy.special import ndtr, ndtri

    if draws.shape[0] == 0:
        nan = np.full(draws.shape[1:], np.nan)
        return nan, nan
    finite = np.isfinite(draws)
    count = finite.sum(axis=0)
    below = np.sum(finite & (draws < estimate), axis=0)
    equal = np.sum(finite & (draws == estimate), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (below + equal / 2) / count
    z0 = np.clip(ndtri(np.clip(np.nan_to_num(share, nan=0.5), 1e-12, 1 - 1e-12)), -Z95, Z95)
    low = _column_quantiles(draws, ndtr(2 * z0 - Z95))
    high = _column_quantiles(draws, ndtr(2 * z0 + Z95))
    unusable = (count == 0) | ~np.isfinite(estimate)
    return np.where(unusable, np.nan, low), np.where(unusable, np.nan, high)


def clean(value: float | None, digits: int = 4) -> float | None:
    """A JSON-safe rounded float, or None for missing / not finite."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return round(value, digits)
