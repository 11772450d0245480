"""Setter and solver strength, separately, with duel-level (cluster) bootstrap intervals.

Setter strength: mean setter score over the player's duel sides (a forfeit scores 0); hint gain
is the mean over its valid sides. Solver strength: unhinted pass rate on other players' valid
environments. Resampling whole duels keeps the episodes of one duel together.

Intervals: the corrected duel bootstrap (`widened_draws` in duels/analytics/intervals.py). A
player's strength is a mean over its own few duels, 3–10 in a tournament, and the plain
percentile bootstrap of such a mean is too narrow: it covered 74–85% of planted strengths with
3–5 duels per player and 90–92% with ten (benchmarks/coverage_bench.py). Each player's draws are
widened about its estimate by sqrt(n/(n − 1))·t(n − 1)/z, n its duels in that role, and held in
the figure's range; the interval is their 2.5–97.5% percentiles (a mean of duels has no fitting
bias for a bias correction to remove). A player with one duel in a role, or whose duels all
scored alike, has no interval (`_shown`), and pages list it apart from the ranking.
The widened draws are what `setter_boot` and `solver_boot` hold, so Kendall τ and P(top solver ≠
top setter) of duels/analytics/divergence.py carry the same correction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.intervals import bootstrap_counts, percentile_interval, widened_draws
from duels.analytics.sides import Side


@dataclass(frozen=True)
class StrengthResult:
    players: list[str]
    setter_score: np.ndarray  # NaN where the player never set
    setter_low: np.ndarray
    setter_high: np.ndarray
    hint_gain: np.ndarray
    hint_gain_low: np.ndarray
    hint_gain_high: np.ndarray
    setter_sides: np.ndarray
    pass_rate: np.ndarray  # NaN where the player never solved
    pass_low: np.ndarray
    pass_high: np.ndarray
    solver_episodes: np.ndarray
    setter_boot: np.ndarray  # (resamples, players), widened for the player's few duels
    solver_boot: np.ndarray
    # Setter (row) against solver (column): mean setter score, mean hint gain, side count.
    pair_score: np.ndarray
    pair_gain: np.ndarray
    pair_sides: np.ndarray


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


def _shown(interval: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The interval a page may show: none where it has no width. Every resample of the player's
    duels then gave the same figure (one duel, or duels that all scored alike: three sides of
    setter score 0.5), which says the uncertainty is unknown, not that there is none; three duels
    that all scored 0 do not make a 95% interval [0, 0]. The draws stay as they are for Kendall τ
    and who is on top."""
    low, high = interval
    flat = np.isclose(low, high)  # False where either is NaN
    return np.where(flat, np.nan, low), np.where(flat, np.nan, high)


def strength_fit(
    *,
    players: Sequence[str],
    sides: Sequence[Side],
    episodes: Sequence[EpisodeRecord],
    environments: Sequence[EnvironmentRecord],
    resamples: int = 200,
    seed: int = 0,
) -> StrengthResult:
    names = list(players)
    index = {name: i for i, name in enumerate(names)}
    size = len(names)
    clusters: dict[object, int] = {}

    def cluster_of(key: object) -> int:
        return clusters.setdefault(key, len(clusters))

    side_cluster = np.array([cluster_of(("duel", s.duel)) for s in sides], dtype=int)
    side_setter = np.array([index[s.setter] for s in sides], dtype=int)
    side_solver = np.array([index[s.solver] for s in sides], dtype=int)
    side_score = np.array([s.setter_score for s in sides], dtype=float)
    side_valid = np.array([s.valid for s in sides], dtype=bool)
    side_gain = np.array([s.hint_gain if s.valid else 0.0 for s in sides], dtype=float)

    environment_by_uuid = {env.uuid: env for env in environments}
    solver_cluster: list[int] = []
    solver_index: list[int] = []
    solver_success: list[float] = []
    for episode in episodes:
        env = environment_by_uuid.get(episode.environment)
        if (
            episode.hinted
            or env is None
            or not env.valid
            or env.author == episode.solver
            or episode.solver not in index
        ):
            continue
        key = ("duel", episode.duel) if episode.duel is not None else ("env", episode.environment)
        solver_cluster.append(cluster_of(key))
        solver_index.append(index[episode.solver])
        solver_success.append(1.0 if episode.success else 0.0)

    n_clusters = len(clusters)

    def per_cluster(cluster: np.ndarray, column: np.ndarray, values: np.ndarray) -> np.ndarray:
        table = np.zeros((n_clusters, size))
        if len(values):
            np.add.at(table, (cluster, column), values)
        return table

    score_sum = per_cluster(side_cluster, side_setter, side_score)
    side_count = per_cluster(side_cluster, side_setter, np.ones(len(sides)))
    gain_sum = per_cluster(side_cluster, side_setter, side_gain * side_valid)
    gain_count = per_cluster(side_cluster, side_setter, side_valid.astype(float))
    solver_cluster_arr = np.array(solver_cluster, dtype=int)
    solver_index_arr = np.array(solver_index, dtype=int)
    success_sum = per_cluster(solver_cluster_arr, solver_index_arr, np.array(solver_success))
    trial_count = per_cluster(solver_cluster_arr, solver_index_arr,
                              np.ones(len(solver_success)))

    setter_score = _ratio(score_sum.sum(axis=0), side_count.sum(axis=0))
    hint_gain = _ratio(gain_sum.sum(axis=0), gain_count.sum(axis=0))
    pass_rate = _ratio(success_sum.sum(axis=0), trial_count.sum(axis=0))
    counts = bootstrap_counts(np.random.default_rng(seed), n_clusters, resamples)
    setter_boot = widened_draws(setter_score, _ratio(counts @ score_sum, counts @ side_count),
                                (side_count > 0).sum(axis=0), bounds=(0.0, 1.0))
    gain_boot = widened_draws(hint_gain, _ratio(counts @ gain_sum, counts @ gain_count),
                              (gain_count > 0).sum(axis=0), bounds=(-1.0, 1.0))
    solver_boot = widened_draws(pass_rate, _ratio(counts @ success_sum, counts @ trial_count),
                                (trial_count > 0).sum(axis=0), bounds=(0.0, 1.0))
    setter_low, setter_high = _shown(percentile_interval(setter_boot))
    gain_low, gain_high = _shown(percentile_interval(gain_boot))
    pass_low, pass_high = _shown(percentile_interval(solver_boot))

    pair_score_sum = np.zeros((size, size))
    pair_gain_sum = np.zeros((size, size))
    pair_gain_count = np.zeros((size, size))
    pair_sides = np.zeros((size, size))
    if len(sides):
        np.add.at(pair_score_sum, (side_setter, side_solver), side_score)
        np.add.at(pair_gain_sum, (side_setter, side_solver), side_gain * side_valid)
        np.add.at(pair_gain_count, (side_setter, side_solver), side_valid.astype(float))
        np.add.at(pair_sides, (side_setter, side_solver), 1.0)

    return StrengthResult(
        players=names,
        setter_score=setter_score,
        setter_low=setter_low,
        setter_high=setter_high,
        hint_gain=hint_gain,
        hint_gain_low=gain_low,
        hint_gain_high=gain_high,
        setter_sides=side_count.sum(axis=0),
        pass_rate=pass_rate,
        pass_low=pass_low,
        pass_high=pass_high,
        solver_episodes=trial_count.sum(axis=0),
        setter_boot=setter_boot,
        solver_boot=solver_boot,
        pair_score=_ratio(pair_score_sum, pair_sides),
        pair_gain=_ratio(pair_gain_sum, pair_gain_count),
        pair_sides=pair_sides,
    )
