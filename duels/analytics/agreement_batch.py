"""Agreement of a whole queue at once, on coded arrays: the figures of `agreement.py` (alpha
with its bootstrap interval, each annotator's agreement, the disputed items) without one Python
object per rating, so a queue at its caps (2,000 designs, 20 answers each, 30 questions of up
to 30 labels: 900 measured parts, 36 million ratings) costs numpy passes over arrays, not
minutes of loops.

A part's ratings are three arrays of one entry per answer: the item, the annotator and the
value's code (-1 where the answer gave none). The point estimate is the same coincidence
formula as the bootstrap's (`alpha_from_coincidences`, equal to the `krippendorff` package's,
tests/duels/analytics/test_agreement.py). The interval resamples the part's pairable items
`resamples` times; `resamples_for` lowers the count (never below 200) where items × parts is
large, so the work is bounded at any queue size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from duels.analytics.agreement import (
    MIN_ITEMS,
    MIN_ITEMS_FOR_INTERVAL,
    RESAMPLES,
    alpha_from_coincidences,
)
from duels.analytics.intervals import bootstrap_counts

MIN_RESAMPLES = 200
WORK_BUDGET = 400_000_000  # resamples × pairable items × values² summed over the parts


def resamples_for(*, items: int, parts: int, values: int = 2) -> int:
    """The bootstrap's resample count for a queue of this size (RESAMPLES when it is small)."""
    work = max(1, items * parts * values * values)
    return int(min(RESAMPLES, max(MIN_RESAMPLES, WORK_BUDGET // work)))


def part_agreement(*, item_of: np.ndarray, annotator_of: np.ndarray, codes: np.ndarray,
                   values: list[Any], level: str, items: int, annotators: list[str],
                   resamples: int, seed: int,
                   draws: dict[bytes, np.ndarray] | None = None) -> dict[str, Any]:
    """One part's figures, as `agreement.agreement_compute` reports them; `disputed` holds the
    indices of the items whose answers differ (the caller shows what it needs of them).

    Parts whose pairable items are the same (every label of a question, and usually every
    question) share one set of resamples through `draws`, keyed by those items."""
    given = codes >= 0
    size = len(values)
    counts = np.bincount(item_of[given] * max(size, 1) + codes[given],
                         minlength=items * max(size, 1)).reshape(items, max(size, 1))
    per_item = counts.sum(axis=1)
    pairable = per_item >= 2
    alpha = low = high = None
    if size >= 2 and pairable.sum() >= MIN_ITEMS:
        rows = counts[pairable].astype(float)
        weights = 1.0 / (per_item[pairable] - 1)
        # Each pairable item's coincidences: (c cᵀ − diag c) / (m − 1), flattened.
        matrices = (rows[:, :, None] * rows[:, None, :]).reshape(len(rows), -1)
        matrices[:, :: size + 1] -= rows
        matrices *= weights[:, None]
        observed = matrices.sum(axis=0).reshape(1, size, size)
        point = float(alpha_from_coincidences(observed, values, level)[0])
        alpha = point if np.isfinite(point) else None
        if alpha is not None and len(rows) >= MIN_ITEMS_FOR_INTERVAL:
            # How often each item is drawn, per resample (a multinomial draw, made as
            # bootstrap_counts makes it: far cheaper than numpy's multinomial).
            key = np.packbits(pairable).tobytes()
            draws_of = None if draws is None else draws.get(key)
            if draws_of is None:
                draws_of = bootstrap_counts(np.random.default_rng(seed), len(rows),
                                            resamples).astype(np.float32)
                if draws is not None and len(draws) < 16:  # a few MB each
                    draws[key] = draws_of
            drawn = (draws_of @ matrices.astype(np.float32)).astype(float)
            draws = alpha_from_coincidences(drawn.reshape(resamples, size, size), values,
                                            level)
            draws = draws[np.isfinite(draws)]
            if len(draws) >= resamples // 2:
                low, high = (float(x) for x in np.percentile(draws, [2.5, 97.5]))
    if pairable.sum() < MIN_ITEMS:
        reason = "needs two designs with two answers each"
    elif alpha is None:
        reason = "every answer is the same: alpha is undefined"
    elif low is None:
        reason = f"an interval needs {MIN_ITEMS_FOR_INTERVAL} designs with two answers each"
    else:
        reason = ""
    # Each rating against the others of its item: same value, and how many others.
    rated_item, rated_code = item_of[given], codes[given]
    same = counts[rated_item, rated_code] - 1
    others = per_item[rated_item] - 1
    who = annotator_of[given]
    same_total = np.bincount(who, weights=same, minlength=len(annotators))
    pair_total = np.bincount(who, weights=others, minlength=len(annotators))
    order = sorted((name, number) for number, name in enumerate(annotators)
                   if pair_total[number] > 0)
    return {
        "level": level, "alpha": alpha, "low": low, "high": high, "reason": reason,
        "pairable": int(pairable.sum()), "items": int((per_item > 0).sum()),
        "values": int(given.sum()),
        "annotators": [{"annotator": name, "agreement": float(same_total[n] / pair_total[n]),
                        "pairs": int(pair_total[n])} for name, n in order],
        "disputed": np.flatnonzero((counts > 0).sum(axis=1) > 1),
    }
