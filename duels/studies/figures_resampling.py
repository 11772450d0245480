"""The study's intervals: a studentized bootstrap over environments, within strata that keep
each domain's balance and the field's authors.

Each per-model study figure is a mean over versions (domain-balanced or pooled), so its
uncertainty is how much that mean would move with other environments drawn from the same
authors in the same domains. Each resample redraws every stratum whole and is studentized by
its own linearised spread: t* = (θ* − θ̂)/se*, and the interval is θ̂ − t*₉₇.₅·se … θ̂ − t*₂.₅·se.
Percentiles of θ* (with Rao–Wu's rescaling and Student's t) covered design 0.91–0.93: an
author's few environments, one its peers all pass or all fail, make the mean lean, and the
spread of a sample is smallest just when its mean has gone furthest. docs/results.md, "The
study's figures", gives the measured coverage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


def stratum_ids(keys: Sequence[Hashable]) -> np.ndarray:
    """Integer stratum ids for hashable stratum keys, numbered in order of first appearance."""
    numbers: dict[Hashable, int] = {}
    return np.array([numbers.setdefault(key, len(numbers)) for key in keys], dtype=np.int64)


@dataclass(frozen=True)
class AuthorStrata:
    """How an author's figures are resampled: strata (F,), balance groups (F,), each group's
    weight in domains (G,) and each version's weight within its group (F,)."""

    strata: np.ndarray
    groups: np.ndarray
    group_weight: np.ndarray
    unit_weight: np.ndarray


# A stratum of fewer environments than this is pooled (an author's domains together, a
# domain's authors together): a studentized bootstrap within two or three environments spreads
# its t far too wide (docs/results.md, "The study's figures").
CELL_MIN = 4


def author_strata(domains: Sequence[str], authors: Sequence[str | None]) -> AuthorStrata:
    """Strata for figures of an author over its own environments, and how those figures
    balance when resampled.

    An author's environments are resampled within each domain where it wrote CELL_MIN or more.
    Its domains with fewer are pooled into one *collapsed* stratum, which its figures balance as
    one group weighing as many domains as it holds, each environment counting 1/(its domain's
    count) in it: the figure is the same, and a resample cannot lose a domain. A domain left
    alone in its collapse stays as it is.
    """
    cells = Counter(zip(authors, domains, strict=True))
    small = Counter(author for (author, _), size in cells.items() if size < CELL_MIN)
    collapsed = [cells[author, domain] < CELL_MIN and small[author] >= 2
                 for author, domain in zip(authors, domains, strict=True)]
    keys = [("collapsed", author) if pooled else ("domain", author, domain)
            for author, domain, pooled in zip(authors, domains, collapsed, strict=True)]
    groups = [("collapsed", author) if pooled else ("domain", domain)
              for author, domain, pooled in zip(authors, domains, collapsed, strict=True)]
    group_ids = stratum_ids(groups)
    weight = np.ones(int(group_ids.max(initial=-1)) + 1)
    for author in small:
        if small[author] >= 2:
            weight[group_ids[groups.index(("collapsed", author))]] = small[author]
    unit = np.array([1 / cells[author, domain] if pooled else 1.0
                     for author, domain, pooled in zip(authors, domains, collapsed,
                                                       strict=True)])
    return AuthorStrata(stratum_ids(keys), group_ids, weight, unit)


def solver_strata(domains: Sequence[str], authors: Sequence[str | None]) -> np.ndarray:
    """Strata for figures of a solver over the field's environments: each author's environments
    within each domain (the field's author mix and domain balance both hold); the authors with
    fewer than CELL_MIN environments in a domain pooled within it; a domain whose pooling
    leaves one environment alone resampled whole; a domain of one environment stays as it is."""
    cells = Counter(zip(domains, authors, strict=True))
    keys = [(domain, author) if cells[domain, author] >= CELL_MIN else (domain, None)
            for domain, author in zip(domains, authors, strict=True)]
    pooled = Counter(key for key in keys if key[1] is None)
    whole = {domain for (domain, _), size in pooled.items() if size == 1}
    return stratum_ids([(domain, "*") if domain in whole else key
                        for key, domain in zip(keys, domains, strict=True)])


def stratified_counts(rng: np.random.Generator, strata: np.ndarray,
                      resamples: int) -> np.ndarray:
    """Bootstrap counts (resamples, units): n draws with replacement within each stratum of n."""
    if len(strata) == 0:
        return np.zeros((resamples, 0))
    order = np.argsort(strata, kind="stable")
    grouped = strata[order]
    starts = np.searchsorted(grouped, grouped, side="left")
    sizes = np.searchsorted(grouped, grouped, side="right") - starts
    picks = order[starts + np.floor(rng.random((resamples, len(order))) * sizes).astype(np.int64)]
    flat = (picks + len(strata) * np.arange(resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * len(strata)).reshape(
        resamples, len(strata)).astype(np.float64)


def group_sums(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """Sums of `values` (..., F) over the units of each group (F,) → (..., count): one sort
    and `np.add.reduceat`, linear in the units (a one-hot product was 20 times slower)."""
    result = np.zeros((*values.shape[:-1], count))
    if not len(groups):
        return result
    if np.all(groups[1:] >= groups[:-1]):  # already in order: no copy (3 times faster)
        present, starts = np.unique(groups, return_index=True)
        result[..., present] = np.add.reduceat(values, starts, axis=-1)
        return result
    order = np.argsort(groups, kind="stable")
    present, starts = np.unique(groups[order], return_index=True)
    result[..., present] = np.add.reduceat(values[..., order], starts, axis=-1)
    return result


def linearised_variance(influence: np.ndarray, weights: np.ndarray,
                        strata: np.ndarray) -> np.ndarray:
    """The stratified linearisation variance of each figure (R, M) from the versions'
    influences (R, M, F) in each weighting (R, F): Σ_h n_h/(n_h − 1) · Σ_{f∈h} w_f (ℓ_f − ℓ̄_h)²,
    a stratum of one adding nothing."""
    count = int(strata.max(initial=-1)) + 1
    size = np.bincount(strata, minlength=count).astype(float)
    weighted = weights[:, None, :] * influence
    first = group_sums(weighted, strata, count)
    second = group_sums(weighted * influence, strata, count)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(size >= 2, (second - first ** 2 / np.maximum(size, 1))
                          * size / np.maximum(size - 1, 1), 0.0)
    return np.maximum(spread.sum(axis=-1), 0.0)


# A resample whose figure moved while its spread is zero has an unbounded t; this stands in.
UNBOUNDED_T = 1e6


def studentized_interval(figure: np.ndarray, variance: np.ndarray, freedom: np.ndarray, *,
                         bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap-t (studentized) 95% interval per figure: row 0 of `figure` and `variance`
    (1 + resamples, figures) is the estimate, the others the resamples. With t* = (θ* − θ̂)/se*,
    the interval is [θ̂ − t*₉₇.₅·se, θ̂ − t*₂.₅·se], held inside `bounds`. Unlike percentiles of
    θ*, it follows a skewed figure's spread where it is: an author's few environments with one
    that its peers all pass or all fail make the mean's distribution lean. NaN where the
    estimate or its spread is undefined or zero, or df < 1 (no stratum with two versions)."""
    estimate, error = figure[0], np.sqrt(variance[0])
    draws, spread = figure[1:], np.sqrt(variance[1:])
    moved = draws - estimate
    # A resample without spread (every version it drew failed, say) that moved is scaled by
    # the estimate's own spread: an unbounded t there made the interval the whole scale for a
    # solver that passed a handful of 400 plays.
    scale = np.where(spread > 0, spread, np.broadcast_to(error, spread.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(scale > 0, moved / np.where(scale > 0, scale, 1.0),
                     np.sign(moved) * UNBOUNDED_T)
    low_t, high_t = percentiles(t, (0.025, 0.975))
    low = np.clip(estimate - high_t * error, *bounds)
    high = np.clip(estimate - low_t * error, *bounds)
    unusable = (~np.isfinite(estimate) | ~(np.asarray(freedom) >= 1) | ~(error > 0)
                | ~np.isfinite(low) | ~np.isfinite(high))
    return np.where(unusable, np.nan, low), np.where(unusable, np.nan, high)


def degrees_of_freedom(strata: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row of `mask` (figures × units): Σ over strata of (units of the figure in it − 1)."""
    mask = np.atleast_2d(mask)
    if mask.shape[1] == 0:
        return np.zeros(mask.shape[0], dtype=np.int64)
    count = np.zeros((mask.shape[0], int(strata.max()) + 1), dtype=np.int64)
    for s in np.unique(strata):
        count[:, s] = mask[:, strata == s].sum(axis=1)
    return np.maximum(count - 1, 0).sum(axis=1)


def percentiles(samples: np.ndarray, levels: tuple[float, ...]) -> list[np.ndarray]:
    """Each column's quantiles at `levels` ignoring NaN, interpolated linearly as numpy's
    default; NaN where a column has no finite value. One sort of the whole array: numpy's
    `nanpercentile` works column by column and took seconds on a study's draws."""
    ordered = np.sort(samples, axis=0)  # NaN sort last
    finite = np.isfinite(samples).sum(axis=0)
    columns = np.arange(samples.shape[1])
    result = []
    for level in levels:
        position = level * np.maximum(finite - 1, 0)
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(finite - 1, 0))
        fraction = position - below
        if samples.shape[0] == 0:
            result.append(np.full(samples.shape[1], np.nan))
            continue
        value = (1 - fraction) * ordered[below, columns] + fraction * ordered[above, columns]
        result.append(np.where(finite > 0, value, np.nan))
    return result


def pair(low: float, high: float) -> list[float] | None:
    """[low, high] as JSON-ready floats, or None when either end is undefined."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return None
    return [float(low), float(high)]
