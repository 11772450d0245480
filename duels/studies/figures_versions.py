"""Per-version figures of a study: how the field's peers did on each version.

A version's *peers* are the field's models other than its author and other than an evaluated
player. Definitions (docs/results.md, "The study's figures"), as the original harness's ranking
script computes them in its ranking function:
- peer discrimination: for each seed every peer played unhinted (two peers at least), the sum
  of |rate_a − rate_b| over pairs of peers divided by ⌊n²/4⌋ (its largest possible value), a
  peer's rate being its unhinted pass share on that seed; the mean over those seeds;
- peer hint effect: the mean of (hinted − unhinted) over the peers' matched pairs;
- the field's pass rates and setter score: the peers' plays pooled, scored by duels/scoring.py.
Intervals: Student's t over the version's seeds (the field held fixed), with the delta
method's spread of the seeds; a bootstrap of four seeds covered 0.85–0.90.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duels.analytics.proportions import wilson_interval
from duels.scoring import SideResults, side_score
from duels.studies.figures_field import Field, Tallies, ratio


@dataclass(frozen=True)
class VersionFigures:
    """Arrays over versions (V,); `scores` holds each version's duels.scoring SideScore."""

    peers: np.ndarray  # peers per version (the panel's size)
    peer_discrimination: np.ndarray
    discrimination_seeds: np.ndarray  # seeds the discrimination averages over
    peer_hint_effect: np.ndarray
    peer_pairs: np.ndarray
    unhinted_successes: np.ndarray
    unhinted_attempted: np.ndarray
    hinted_successes: np.ndarray
    hinted_attempted: np.ndarray
    scores: tuple
    intervals: dict  # figure → (low (V,), high (V,))


def pairwise_spread(rates: np.ndarray) -> np.ndarray:
    """Σ_{i<j} |r_i − r_j| along axis 0 (peers), by sorting: Σ_i (2i − n + 1)·r_(i)."""
    n = rates.shape[0]
    ordered = np.sort(rates, axis=0)
    coefficient = 2 * np.arange(n) - n + 1
    return np.tensordot(coefficient, ordered, axes=(0, 0))


def seed_discrimination(tallies: Tallies, peers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V, J) per-seed discrimination (NaN where not every peer played the seed unhinted, or
    fewer than two peers), and (V, J) whether the seed counts."""
    attempted = tallies.seed["unhinted_attempted"]
    rates = ratio(tallies.seed["unhinted_successes"], attempted)
    versions, _, columns = attempted.shape
    values = np.full((versions, columns), np.nan)
    for v in range(versions):
        panel = peers[v]
        n = int(panel.sum())
        if n < 2:
            continue
        complete = (attempted[v][panel] > 0).all(axis=0)
        if not complete.any():
            continue
        spread = pairwise_spread(np.nan_to_num(rates[v][panel]))
        values[v] = np.where(complete, spread / (n * n // 4), np.nan)
    return values, np.isfinite(values)


def _peer_sum(counts: np.ndarray, peers: np.ndarray) -> np.ndarray:
    """Σ over peers of (V, S) or (V, S, J) counts."""
    if counts.ndim == 3:
        return np.einsum("vsj,vs->vj", counts, peers.astype(float))
    return (counts * peers).sum(axis=1)


def _field_scores(field: Field, peers: np.ndarray) -> tuple:
    """Each version's peers' plays pooled into one side, keyed by (solver, seed, trial)."""
    scores = []
    for v in range(len(field.versions)):
        conditions = []
        for outcomes in (field.unhinted, field.hinted):
            s, k = np.nonzero((outcomes[v] >= 0) & peers[v][:, None])
            conditions.append({(int(a), int(b)): bool(outcomes[v, a, b]) for a, b in zip(s, k,
                                                                                  strict=True)})
        scores.append(side_score(results=SideResults(unhinted=conditions[0],
                                                     hinted=conditions[1])))
    return tuple(scores)


def version_figures(field: Field, tallies: Tallies, peers: np.ndarray, *, intervals: bool,
                    scored: bool = True) -> VersionFigures:
    """Every per-version figure, with its interval over seeds when `intervals`; without
    `scored`, the field's pass rates and setter scores are left out (`scores` is empty)."""
    per_seed, counted = seed_discrimination(tallies, peers)
    seed = {name: _peer_sum(values, peers) for name, values in tallies.seed.items()}
    counted_seeds = counted.sum(axis=1)
    with np.errstate(invalid="ignore"):
        discrimination = np.where(counted_seeds > 0,
                                  np.nansum(per_seed, axis=1) / np.maximum(counted_seeds, 1),
                                  np.nan)
    totals = {name: values.sum(axis=1) for name, values in seed.items()}
    figures = VersionFigures(
        peers=peers.sum(axis=1), peer_discrimination=discrimination,
        discrimination_seeds=counted_seeds,
        peer_hint_effect=ratio(totals["gain_sum"], totals["matched_pairs"]),
        peer_pairs=totals["matched_pairs"].astype(np.int64),
        unhinted_successes=totals["unhinted_successes"].astype(np.int64),
        unhinted_attempted=totals["unhinted_attempted"].astype(np.int64),
        hinted_successes=totals["hinted_successes"].astype(np.int64),
        hinted_attempted=totals["hinted_attempted"].astype(np.int64),
        scores=_field_scores(field, peers) if scored else (), intervals={},
    )
    if intervals and len(field.versions):
        figures.intervals.update(_seed_intervals(seed, per_seed, counted))
    return figures


def _seed_interval(estimate: np.ndarray, influence: np.ndarray, present: np.ndarray, *,
                   bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Student's t over seeds: estimate ± t(n − 1, 0.975)·se, se² = n/(n − 1)·Σ (ℓ_j − ℓ̄)² over
    the n seeds present (ℓ_j the seed's influence); NaN below two seeds or without spread."""
    from scipy.special import stdtrit  # as duels/analytics/intervals.py: not scipy.stats

    n = present.sum(axis=1)
    centred = np.where(present, influence - (influence * present).sum(axis=1, keepdims=True)
                       / np.maximum(n, 1)[:, None], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        error = np.sqrt(n / np.maximum(n - 1, 1) * (centred ** 2).sum(axis=1))
        half = np.where(n >= 2, stdtrit(np.maximum(n - 1, 1), 0.975), np.nan) * error
    unusable = ~np.isfinite(estimate) | (n < 2) | ~(error > 0)
    low = np.clip(estimate - half, *bounds)
    high = np.clip(estimate + half, *bounds)
    return np.where(unusable, np.nan, low), np.where(unusable, np.nan, high)


def _pooled_influence(numerator: np.ndarray, denominator: np.ndarray):
    """A pooled share over seeds (V, J): its estimate (V,) and each seed's influence (V, J)."""
    total = denominator.sum(axis=1)
    estimate = ratio(numerator.sum(axis=1), total)
    influence = (numerator - np.nan_to_num(estimate)[:, None] * denominator) * np.nan_to_num(
        ratio(1.0, total))[:, None]
    return estimate, influence


def _seed_intervals(seed: dict, per_seed: np.ndarray, counted: np.ndarray) -> dict:
    """Intervals of the per-version figures over the version's seeds (the field held fixed)."""
    p_u, l_u = _pooled_influence(seed["unhinted_successes"], seed["unhinted_attempted"])
    p_h, l_h = _pooled_influence(seed["hinted_successes"], seed["hinted_attempted"])
    discrimination, l_d = _pooled_influence(np.nan_to_num(per_seed) * counted, counted * 1.0)
    effect, l_e = _pooled_influence(seed["gain_sum"], seed["matched_pairs"])
    has_u, has_h = seed["unhinted_attempted"] > 0, seed["hinted_attempted"] > 0
    result = {
        "peer_discrimination": _seed_interval(discrimination, l_d, counted, bounds=(0.0, 1.0)),
        "peer_hint_effect": _seed_interval(effect, l_e, seed["matched_pairs"] > 0,
                                           bounds=(-1.0, 1.0)),
        "p_unhinted": _seed_interval(p_u, l_u, has_u, bounds=(0.0, 1.0)),
        "p_hinted": _seed_interval(p_h, l_h, has_h, bounds=(0.0, 1.0)),
        # The delta method: g = p_h − p_u, s = p_h · (1 − p_u).
        "hint_gain": _seed_interval(p_h - p_u, l_h - l_u, has_u | has_h, bounds=(-1.0, 1.0)),
        "setter_score": _seed_interval(p_h * (1 - p_u), (1 - np.nan_to_num(p_u))[:, None] * l_h
                                       - np.nan_to_num(p_h)[:, None] * l_u, has_u | has_h,
                                       bounds=(0.0, 1.0)),
    }
    # A pass rate of 0 or 1 on every seed shows no spread: Wilson's interval of its count.
    for name, successes, attempted in (("p_unhinted", "unhinted_successes", "unhinted_attempted"),
                                       ("p_hinted", "hinted_successes", "hinted_attempted")):
        low, high = result[name]
        passed, played = seed[successes].sum(axis=1), seed[attempted].sum(axis=1)
        for v in np.nonzero(np.isnan(low) & (played > 0) & ((passed == 0) | (passed == played))
                            )[0]:
            wilson = wilson_interval(float(passed[v]), float(played[v]))
            low[v], high[v] = (0.0, wilson[1]) if passed[v] == 0 else (wilson[0], 1.0)
    return result


def score_values(scores: tuple, name: str) -> np.ndarray:
    return np.array([np.nan if getattr(score, name) is None else getattr(score, name)
                     for score in scores], dtype=float)
