"""Human preference between designs: a Bradley–Terry ranking of a pairwise queue's choices,
set beside what the duels measured (hint gain, training value) with their rank correlation.

The fit is the duel ratings' (`duels.analytics.ratings.ratings_fit`: maximum likelihood, ties
half, bootstrap intervals over judgments); each judgment plays the part of a duel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import rankdata

from duels.analytics.intervals import clean
from duels.analytics.ratings import DENSE_MAX_PLAYERS, ratings_fit

SCORES = {"a": 1.0, "b": 0.0, "tie": 0.5}
MEASURES = ("hint_gain", "training_value")
MIN_PAIRS_FOR_CORRELATION = 3
LARGE_QUEUE_RESAMPLES = 200


def _row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row pair (ties get average ranks); NaN where a row is constant."""
    rx, ry = rankdata(x, axis=-1), rankdata(y, axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (rx * ry).sum(axis=-1) / np.sqrt((rx ** 2).sum(axis=-1) * (ry ** 2).sum(axis=-1))


def _spearman(xs: list[float], ys: list[float], *, resamples: int,
              seed: int) -> dict[str, Any] | None:
    if len(xs) < MIN_PAIRS_FOR_CORRELATION or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    rho = float(_row_spearman(x, y))
    # Designs resampled with replacement, all resamples at once.
    picks = np.random.default_rng(seed).integers(0, len(x), (resamples, len(x)))
    draws = _row_spearman(x[picks], y[picks])
    draws = draws[np.isfinite(draws)]
    low, high = (np.percentile(draws, [2.5, 97.5]) if len(draws) >= resamples // 2
                 else (np.nan, np.nan))
    return {"spearman": clean(rho), "low": clean(float(low)), "high": clean(float(high)),
            "n": len(xs)}


def pairwise_ranking(
    *, judgments: Sequence[tuple[str, str, str]], measured: Mapping[str, Mapping[str, Any]],
    resamples: int = 1000, seed: int = 0,
) -> dict[str, Any] | None:
    """Rank designs from (left, right, choice) judgments; None when there are none.

    `measured` maps a design to its measured figures (`hint_gain`, `training_value`, or None).
    Returns rows best first and, per measure, Spearman's ρ between the human rating and it
    (bootstrap percentile interval over designs).
    """
    games = [(left, right, SCORES[choice]) for left, right, choice in judgments
             if choice in SCORES]
    designs = len({name for left, right, _ in games for name in (left, right)})
    if designs > DENSE_MAX_PLAYERS:
        # Fitted on the pairs that met (ratings_sparse.py) with the duel ratings' count of
        # resamples: 600 designs in 600 pairs cost about a second of CPU and 60 MB.
        resamples = min(resamples, LARGE_QUEUE_RESAMPLES)
    fit = ratings_fit(players=(), games=games, resamples=resamples, seed=seed)
    if fit is None:
        return None
    rows = []
    for i, design in enumerate(fit.players):
        figures = measured.get(design) or {}
        rows.append({"design": design, "rating": clean(float(fit.rating[i])),
                     "low": clean(float(fit.low[i])), "high": clean(float(fit.high[i])),
                     "rank": fit.rank[i], "judgments": fit.duels[i],
                     **{measure: figures.get(measure) for measure in MEASURES}})
    rows.sort(key=lambda row: -row["rating"])
    correlations = {}
    for number, measure in enumerate(MEASURES):
        known = [row for row in rows if row[measure] is not None]
        correlations[measure] = _spearman([row["rating"] for row in known],
                                          [row[measure] for row in known],
                                          resamples=resamples, seed=seed + number)
    return {"rows": rows, "correlations": correlations, "judgments": len(games)}
