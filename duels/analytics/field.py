"""What EnvDuels adds to a field's own figures: the duel ratings, transitivity and the study's
findings from head-to-head results derived from the field, and the joint item-response model
fitted on the field's plays (every environment met by many solvers).

The head-to-head rows come from the field's figures (duels/studies/figures.py: for each pair,
A's environments as played by B against B's as played by A, scored by duels/scoring.py's rule);
each decided pair is one game for the ratings, as a duel is in a tournament.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from duels.analytics.compute import (
    INTERVAL_METHODS,
    ratings_table,
    rounded,
    transitivity_table,
)
from duels.analytics.convergence import convergence_fit
from duels.analytics.data import AnalyticsInput, EnvironmentRecord, EpisodeRecord
from duels.analytics.designs import design_records
from duels.analytics.findings import findings_compute
from duels.analytics.irt_report import IRT_RESAMPLES, irt_compute
from duels.analytics.scale import scale_fit
from duels.analytics.sides import Game

POINTS = {"a": 1.0, "b": 0.0, "draw": 0.5}


def field_games(head_to_head: Sequence[Mapping]) -> list[Game]:
    """Each decided head-to-head pair as a game: A's points 1, ½ or 0 by its outcome."""
    return [Game(index, row["a"], row["b"], POINTS[row["outcome"]])
            for index, row in enumerate(head_to_head) if row.get("outcome") in POINTS]


def field_analytics(
    *, players: Sequence[str], head_to_head: Sequence[Mapping],
    episodes: Sequence[EpisodeRecord], environments: Sequence[EnvironmentRecord],
    sizes: Mapping[str, float] | None = None, resamples: int = 1000, seed: int = 0,
) -> dict:
    """Ratings, head-to-head matrix, transitivity, the joint model and the five findings.

    `episodes` are the field's decided plays of valid versions, self plays left out (as every
    figure but the direct common-panel solve does); `environments` those versions.
    """
    games = field_games(head_to_head)
    result: dict = {
        "ratings": [], "transitivity": None, "divergence": None, "transfer": None,
        "observe_uplift": [], "scale": None, "findings": [],
        "head_to_head_games": len(games),
        "summary": {"players": len(players), "duels": len(games), "episodes": len(episodes),
                    "environments": len(environments), "resamples": resamples,
                    "players_with_size": len(sizes or {})},
        "interval_methods": {key: INTERVAL_METHODS[key]
                             for key in ("ratings", "transitivity", "irt")},
    }
    designs = design_records(environments=environments, episodes=episodes)
    result["irt"] = irt_compute(episodes=designs.episodes, environments=designs.environments,
                                resamples=min(resamples, IRT_RESAMPLES), seed=seed)
    result["convergence"] = convergence_fit(environments=designs.environments, seed=seed)
    if games:
        rows, _, _, _, points, boot_points = ratings_table(
            AnalyticsInput(players=tuple(players)), games, resamples, seed)
        result["ratings"] = rows
        result["transitivity"] = transitivity_table(points, boot_points, games, seed)
    if result["irt"] and sizes:
        result["scale"] = scale_fit(
            sizes=dict(sizes), uplift={}, resamples=resamples, seed=seed,
            setter_strength={row["player"]: row["rating"] for row in result["irt"]["authors"]})
    result = rounded(result)
    result["findings"] = findings_compute(result, field="study")
    return result
