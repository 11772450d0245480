"""Per-version figures of a study: how the field's peers did on each version.

A version's *peers* are the field's models other than its author and other than an evaluated
player. Definitions (docs/results.md, "The study's figures"), as the original harness's ranking
script computes them in its ranking function:
- peer discrimination: for each seed every peer played unhinted (two peers at least), the sum
  of |rate_a − rate_b| over pairs of peers divided by ⌊n²/4⌋ (its largest possible value), a
  peer's rate being its unhinted pass share on that seed; the mean over those seeds;
- peer hint effect: the mean of (hinted − unhinted) over the peers' matched pairs;
- the field's pass rates and setter score: the peers' plays pooled, scored by duels/scoring.py.
Intervals: a bootstrap over the version's seeds (the field held fixed), Rao–Wu rescaled and
widened by t(seeds − 1)/z.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duels.scoring import SideResults, side_score
from duels.studies.figures_field import Field, Tallies, ratio
from duels.studies.figures_resampling import resample_weights, widened_interval


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
                    resamples: int, rng: np.random.Generator,
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
        figures.intervals.update(_seed_intervals(field, figures, seed, per_seed, counted,
                                                 resamples, rng))
    return figures


def _seed_intervals(field: Field, figures: VersionFigures, seed: dict, per_seed: np.ndarray,
                    counted: np.ndarray, resamples: int, rng: np.random.Generator) -> dict:
    """Intervals of the per-version figures: the version's seeds resampled (Rao–Wu)."""
    versions, columns = per_seed.shape
    present = np.arange(columns)[None, :] < field.seed_count[:, None]
    cell_version = np.nonzero(present)[0]
    weights = np.zeros((resamples, versions, columns))
    weights[:, present] = resample_weights(rng, cell_version, resamples)

    def pooled(numerator, denominator):
        return ratio(np.einsum("rvj,vj->rv", weights, numerator),
                     np.einsum("rvj,vj->rv", weights, denominator))

    p_u = pooled(seed["unhinted_successes"], seed["unhinted_attempted"])
    p_h = pooled(seed["hinted_successes"], seed["hinted_attempted"])
    draws = {
        "peer_discrimination": pooled(np.nan_to_num(per_seed), counted.astype(float)),
        "peer_hint_effect": pooled(seed["gain_sum"], seed["matched_pairs"]),
        "p_unhinted": p_u, "p_hinted": p_h, "hint_gain": p_h - p_u,
        "setter_score": p_h * (1 - p_u),
    }
    estimates = {
        "peer_discrimination": figures.peer_discrimination,
        "peer_hint_effect": figures.peer_hint_effect,
        "p_unhinted": score_values(figures.scores, "p_unhinted"),
        "p_hinted": score_values(figures.scores, "p_hinted"),
        "hint_gain": score_values(figures.scores, "hint_gain"),
        "setter_score": score_values(figures.scores, "setter_score"),
    }
    seeds_with = {
        "peer_discrimination": counted.sum(axis=1),
        "peer_hint_effect": (seed["matched_pairs"] > 0).sum(axis=1),
        "p_unhinted": (seed["unhinted_attempted"] > 0).sum(axis=1),
        "p_hinted": (seed["hinted_attempted"] > 0).sum(axis=1),
    }
    seeds_with["hint_gain"] = np.minimum(seeds_with["p_unhinted"], seeds_with["p_hinted"])
    seeds_with["setter_score"] = seeds_with["hint_gain"]
    bounds = {"peer_hint_effect": (-1.0, 1.0), "hint_gain": (-1.0, 1.0)}
    return {name: widened_interval(estimates[name], draws[name], seeds_with[name] - 1,
                                   bounds=bounds.get(name, (0.0, 1.0)))
            for name in draws}


def score_values(scores: tuple, name: str) -> np.ndarray:
    return np.array([np.nan if getattr(score, name) is None else getattr(score, name)
                     for score in scores], dtype=float)
