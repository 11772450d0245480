"""Agreement between annotators: Krippendorff's alpha per question with a bootstrap interval,
each annotator's agreement with the others, and the items where they disagree.

The point estimate comes from the `krippendorff` package. The interval resamples whole items
(designs) with replacement: alpha is a ratio of sums over items of their coincidence matrices, so
each resample is one matrix product over the items' matrices and a batch of ratios, the same
formula as the package's (`alpha_from_coincidences` is checked against it in the tests).
Levels: nominal for labels and yes/no, ordinal (or interval, when the question says so) for
scales. A question with several labels is judged label by label (ticked or not, nominal).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import krippendorff
import numpy as np

RESAMPLES = 1000
MIN_ITEMS = 2
# Resampling two or three designs redraws the same few again and again, which would print a
# near-zero-width "interval": below this many the uncertainty is unknown, not small.
MIN_ITEMS_FOR_INTERVAL = 5


@dataclass(frozen=True)
class Rating:
    """One annotator's value for one item (a design) on one measured question."""

    item: str
    annotator: str
    value: Any


def _codes(ratings: Sequence[Rating], level: str) -> tuple[list[Any], dict[Any, int]]:
    values = sorted({r.value for r in ratings}, key=lambda v: (str(type(v)), v))
    return values, {value: i for i, value in enumerate(values)}


def unit_coincidences(ratings: Sequence[Rating], level: str
                      ) -> tuple[np.ndarray, list[Any], list[str]]:
    """Each pairable item's coincidence matrix (items × K × K), the K values and the items."""
    values, code = _codes(ratings, level)
    by_item: dict[str, list[int]] = defaultdict(list)
    for rating in ratings:
        by_item[rating.item].append(code[rating.value])
    items = [item for item, coded in by_item.items() if len(coded) >= 2]
    size = len(values)
    matrices = np.zeros((len(items), size, size))
    for u, item in enumerate(items):
        counts = np.bincount(by_item[item], minlength=size).astype(float)
        pairs = np.outer(counts, counts) - np.diag(counts)
        matrices[u] = pairs / (len(by_item[item]) - 1)
    return matrices, values, items


def _distances(values: list[Any], level: str, totals: np.ndarray) -> np.ndarray:
    """Squared distances δ² (batch × K × K) for the level, from the value totals (batch × K)."""
    size = len(values)
    if level == "nominal":
        delta = 1.0 - np.eye(size)
        return np.broadcast_to(delta, (*totals.shape[:-1], size, size))
    if level == "interval":
        numbers = np.asarray(values, dtype=float)
        delta = (numbers[:, None] - numbers[None, :]) ** 2
        return np.broadcast_to(delta, (*totals.shape[:-1], size, size))
    # Ordinal: (sum of the totals from c to k − (n_c + n_k) / 2)², values in rank order.
    cumulative = np.cumsum(totals, axis=-1)
    low = np.minimum.outer(np.arange(size), np.arange(size))
    high = np.maximum.outer(np.arange(size), np.arange(size))
    before = np.where(low > 0, np.take(cumulative, np.maximum(low - 1, 0), axis=-1), 0.0)
    span = np.take(cumulative, high, axis=-1) - before
    half = (totals[..., :, None] + totals[..., None, :]) / 2
    return (span - half) ** 2


def alpha_from_coincidences(observed: np.ndarray, values: list[Any], level: str) -> np.ndarray:
    """Alpha for a batch of coincidence matrices (batch × K × K); NaN where undefined."""
    totals = observed.sum(axis=-1)
    n = totals.sum(axis=-1)
    delta = _distances(values, level, totals)
    disagreement = np.sum(observed * delta, axis=(-2, -1))
    expected = np.sum(totals[..., :, None] * totals[..., None, :] * delta, axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * disagreement / expected, np.nan)


def alpha_point(ratings: Sequence[Rating], level: str) -> float | None:
    """Krippendorff's alpha by the `krippendorff` package; None when it is undefined."""
    annotators = sorted({r.annotator for r in ratings})
    items = sorted({r.item for r in ratings})
    values, code = _codes(ratings, level)
    if len(values) < 2 or len(items) < MIN_ITEMS:
        return None
    data = np.full((len(annotators), len(items)), np.nan)
    row = {name: i for i, name in enumerate(annotators)}
    column = {item: i for i, item in enumerate(items)}
    for rating in ratings:
        number = rating.value if level == "interval" else code[rating.value]
        data[row[rating.annotator], column[rating.item]] = float(number)
    try:
        value = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    except ValueError:  # fewer than two pairable values, or a single value in the domain
        return None
    return float(value) if np.isfinite(value) else None


def alpha_interval(ratings: Sequence[Rating], level: str, *, resamples: int = RESAMPLES,
                   seed: int = 0) -> tuple[float | None, float | None]:
    """95% bootstrap percentile interval of alpha, resampling items with replacement."""
    matrices, values, items = unit_coincidences(ratings, level)
    if len(items) < MIN_ITEMS_FOR_INTERVAL or len(values) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(items), np.full(len(items), 1 / len(items)), size=resamples)
    observed = np.tensordot(counts.astype(float), matrices, axes=1)
    draws = alpha_from_coincidences(observed, values, level)
    draws = draws[np.isfinite(draws)]
    if len(draws) < resamples // 2:
        return None, None
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def annotator_agreement(ratings: Sequence[Rating]) -> list[dict[str, Any]]:
    """For each annotator: how often their value equals another annotator's on the same item,
    over every pair they share (and how many pairs that is)."""
    by_item: dict[str, list[Rating]] = defaultdict(list)
    for rating in ratings:
        by_item[rating.item].append(rating)
    same: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for rows in by_item.values():
        for mine in rows:
            for other in rows:
                if other.annotator != mine.annotator:
                    total[mine.annotator] += 1
                    same[mine.annotator] += int(other.value == mine.value)
    return [{"annotator": name, "agreement": same[name] / total[name], "pairs": total[name]}
            for name in sorted(total)]


def disagreements(ratings: Sequence[Rating]) -> list[dict[str, Any]]:
    """Items whose annotators gave different values, with each annotator's value."""
    by_item: dict[str, dict[str, Any]] = defaultdict(dict)
    for rating in ratings:
        by_item[rating.item][rating.annotator] = rating.value
    return [{"item": item, "values": values} for item, values in by_item.items()
            if len({repr(v) for v in values.values()}) > 1]


def agreement_compute(ratings: Sequence[Rating], level: str, *, resamples: int = RESAMPLES,
                      seed: int = 0) -> dict[str, Any]:
    """Alpha with its interval, per-annotator agreement and the disagreements of one question."""
    alpha = alpha_point(ratings, level)
    low, high = alpha_interval(ratings, level, resamples=resamples, seed=seed) \
        if alpha is not None else (None, None)
    pairable = len(unit_coincidences(ratings, level)[2])
    if pairable < MIN_ITEMS:
        reason = "needs two designs with two answers each"
    elif alpha is None:
        reason = "every answer is the same: alpha is undefined"
    elif low is None:
        reason = f"an interval needs {MIN_ITEMS_FOR_INTERVAL} designs with two answers each"
    else:
        reason = ""
    return {
        "level": level, "alpha": alpha, "low": low, "high": high, "reason": reason,
        "pairable": pairable,
        "items": len({r.item for r in ratings}), "values": len(ratings),
        "annotators": annotator_agreement(ratings),
        "disagreements": disagreements(ratings),
    }
