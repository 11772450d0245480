"""One entry point: every analytics figure from plain data, in the shape of docs/json-outputs.md.

`analytics_compute(data)` returns the keys of docs/json-outputs.md (players named by name, null
where a figure cannot be computed yet) plus `figures` (plotly JSON and the table behind each
chart), `summary` (counts) and `interval_methods` (how each interval is computed) for the page.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from duels.analytics import charts
from duels.analytics.bootstrap import BOOTSTRAP_RESAMPLES
from duels.analytics.compliance import format_error_rates
from duels.analytics.convergence import convergence_fit
from duels.analytics.data import AnalyticsInput
from duels.analytics.designs import design_records
from duels.analytics.divergence import divergence_fit
from duels.analytics.environments import environment_gains
from duels.analytics.findings import findings_compute
from duels.analytics.flywheel import flywheel_compute
from duels.analytics.intervals import clean
from duels.analytics.irt_report import IRT_RESAMPLES, irt_compute
from duels.analytics.observe import observe_uplift
from duels.analytics.ratings import cross_validated_accuracy, ratings_fit
from duels.analytics.scale import scale_fit
from duels.analytics.sides import duel_sides, voided_sides
from duels.analytics.strength import strength_fit
from duels.analytics.training_value import training_values
from duels.analytics.transfer import transfer_fit, transfer_points
from duels.analytics.transitivity import transitivity_fit

# How each interval is computed, stated on the page next to the figures.
INTERVAL_METHODS = {
    "ratings": "bootstrap over whole duels, each player's draws widened for its n duels "
               "(√(n/(n−1))·t/z), bias-corrected percentile",
    "setters": "bootstrap percentile over whole duels (a duel's episodes stay together), each "
               "player's draws widened for its n duels (√(n/(n−1))·t/z)",
    "solvers": "bootstrap percentile over whole duels (a duel's episodes stay together), each "
               "player's draws widened for its n duels (√(n/(n−1))·t/z)",
    "divergence": "Kendall τ-b; bootstrap percentile over whole duels, from the setters' and "
                  "solvers' widened draws",
    "transitivity": "transitive share; bootstrap percentile over whole duels",
    "environments": "Newcombe hybrid score interval for a difference of two pass rates",
    "transfer": "Spearman ρ; bootstrap percentile over transfer rows",
    "observe_uplift": "bootstrap percentile, observe and other duels resampled separately",
    "scale": "Spearman ρ; bootstrap percentile over players",
    "irt": "θ and Author ratings: bootstrap over environments, stratified by author and "
           f"rescaled for small strata (Rao–Wu), {IRT_RESAMPLES} resamples at most, basic "
           "(reflected) interval for θ, percentile for the Author rating with its draws "
           "widened for the author's n environments (t(n−1)/z); difficulty and hint "
           "effect: normal (Laplace) approximation",
}
MIN_DUELS = 1


def rounded(value):
    """Round floats for storage, recursively; NaN and infinities become None."""
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item) for item in value]
    if isinstance(value, float | np.floating):
        return clean(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def ratings_table(data: AnalyticsInput, games: list, resamples: int, seed: int) -> tuple:
    """Rating rows (best first), the rating order, and the head-to-head matrices in it."""
    fit = ratings_fit(players=data.players, games=[(g.a, g.b, g.score) for g in games],
                      resamples=resamples, seed=seed)
    rows = [
        {"player": name, "rating": fit.rating[i], "low": fit.low[i], "high": fit.high[i],
         "rank": fit.rank[i], "duels": fit.duels[i]}
        for i, name in enumerate(fit.players)
    ]
    # Players without an interval are not ranked: they follow the ranked ones.
    rows.sort(key=lambda row: (row["rank"] is None, row["rank"] or 0, -row["rating"],
                               row["player"]))
    order = [row["player"] for row in rows]
    position = {name: i for i, name in enumerate(fit.players)}
    points = fit.points
    win_rate, duel_counts = [], []
    for name in order:
        i = position[name]
        rate_row, count_row = [], []
        for other in order:
            j = position[other]
            played = points[i, j] + points[j, i]
            rate_row.append(points[i, j] / played if played and i != j else None)
            count_row.append(int(round(played)) if i != j else None)
        win_rate.append(rate_row)
        duel_counts.append(count_row)
    return rows, order, win_rate, duel_counts, points, fit.boot_points


def transitivity_table(points, boot_points, games: list, seed: int) -> dict | None:
    """Transitivity of the head-to-head points and the held-out accuracy of Bradley–Terry."""
    transitivity = transitivity_fit(points, boot_points)
    accuracy = cross_validated_accuracy(games=[(g.a, g.b, g.score) for g in games], seed=seed)
    if transitivity is not None or accuracy is not None:
        transitivity = transitivity or {"cyclic_triads": None, "zeta": None,
                                        "transitive_share": None}
        transitivity["bt_accuracy"] = accuracy[0] if accuracy else None
        transitivity["bt_accuracy_duels"] = accuracy[1] if accuracy else 0
        transitivity["baseline"] = 0.5
    return transitivity


def analytics_compute(
    data: AnalyticsInput,
    *,
    computed_at: datetime | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> dict:
    """All figures, deterministic for a given `seed`."""
    sides, games = duel_sides(data.duels, data.episodes)
    names = list(dict.fromkeys([*data.players, *(s.setter for s in sides),
                                *(s.solver for s in sides)]))
    result: dict = {
        "computed_at": (computed_at or datetime.now(UTC)).isoformat(),
        "ratings": [], "setters": [], "solvers": [], "divergence": None,
        "transitivity": None, "environments": [],
        "convergence": {"clusters": [], "p_value": None}, "transfer": None,
        "observe_uplift": [],
        # Compliance apart from skill: counted even before there are enough duels.
        "format_errors": format_error_rates(data.compliance),
        "summary": {
            "players": len(data.players), "duels": len(data.duels),
            "episodes": len(data.episodes), "environments": len(data.environments),
            "transfer_results": len(data.transfers), "resamples": resamples,
            "voided_sides": voided_sides(data.duels),
        },
        "enough": len(games) >= MIN_DUELS,
        "figures": {},
        "scale": None,
        "findings": [],
        "interval_methods": {key: f"95%, {method}, {resamples} resamples"
                             if "bootstrap" in method else f"95%, {method}"
                             for key, method in INTERVAL_METHODS.items()},
    }
    result["summary"]["players_with_size"] = len(data.sizes)
    # Copies of one source are one design: one item of the joint model, one hint-gain row, one
    # environment of the convergence test. Duels keep scoring the copies they played.
    designs = design_records(environments=data.environments, episodes=data.episodes)
    result["summary"]["designs"] = len(designs.environments)
    # The joint model uses every finished episode, in a duel or not.
    result["irt"] = irt_compute(episodes=designs.episodes, environments=designs.environments,
                                resamples=min(resamples, IRT_RESAMPLES), seed=seed)
    result["training"] = training_values(
        environments=data.environments, episodes=data.episodes,
        irt_rows=result["irt"]["environments"] if result["irt"] else [])
    result["flywheel"] = flywheel_compute(
        environments=data.environments, episodes=data.episodes,
        irt_rows=result["irt"]["environments"] if result["irt"] else [])
    if not result["enough"]:
        result = rounded(result)
        result["findings"] = findings_compute(result)
        return result

    ratings, order, win_rate, duel_counts, points, boot_points = ratings_table(
        data, games, resamples, seed)
    result["ratings"] = ratings

    strength = strength_fit(players=names, sides=sides, episodes=data.episodes,
                            environments=data.environments, resamples=resamples, seed=seed + 1)
    for i, name in enumerate(strength.players):
        if strength.setter_sides[i]:
            result["setters"].append({
                "player": name, "setter_score": strength.setter_score[i],
                "low": strength.setter_low[i], "high": strength.setter_high[i],
                "hint_gain": strength.hint_gain[i], "hint_gain_low": strength.hint_gain_low[i],
                "hint_gain_high": strength.hint_gain_high[i],
                "sides": int(strength.setter_sides[i]),
                "against": {
                    other: {"setter_score": strength.pair_score[i, j],
                            "hint_gain": strength.pair_gain[i, j],
                            "sides": int(strength.pair_sides[i, j])}
                    for j, other in enumerate(strength.players) if strength.pair_sides[i, j]
                },
            })
        if strength.solver_episodes[i]:
            result["solvers"].append({
                "player": name, "pass_rate": strength.pass_rate[i],
                "low": strength.pass_low[i], "high": strength.pass_high[i],
                "episodes": int(strength.solver_episodes[i]),
            })
    result["setters"].sort(key=lambda r: -r["setter_score"])
    result["solvers"].sort(key=lambda r: -r["pass_rate"])
    result["divergence"] = divergence_fit(
        setter_score=strength.setter_score, pass_rate=strength.pass_rate,
        setter_boot=strength.setter_boot, solver_boot=strength.solver_boot,
    )

    result["transitivity"] = transitivity_table(points, boot_points, games, seed)

    result["environments"] = environment_gains(environments=designs.environments,
                                               episodes=designs.episodes)
    convergence = convergence_fit(environments=designs.environments, seed=seed)
    result["convergence"] = convergence
    transfer_rows = transfer_points(transfers=data.transfers, episodes=data.episodes,
                                    environments=data.environments)
    result["transfer"] = transfer_fit(rows=transfer_rows, resamples=resamples, seed=seed)
    result["observe_uplift"] = observe_uplift(sides=sides, resamples=resamples, seed=seed)
    result["scale"] = scale_fit(
        sizes=dict(data.sizes),
        # Setter strength is the Author rating of the joint model when there is one.
        setter_strength=(
            {row["player"]: row["rating"] for row in result["irt"]["authors"]}
            if result["irt"] else
            {row["player"]: row["setter_score"] for row in result["setters"]}),
        uplift={row["player"]: row["uplift"] for row in result["observe_uplift"]},
        resamples=resamples, seed=seed,
    )

    result = rounded(result)
    result["findings"] = findings_compute(result)
    figures = {"ratings": charts.ratings_figure(result["ratings"])}
    figures.update(charts.head_to_head_figures(order, rounded(win_rate), duel_counts))
    figures["setter-solver"] = charts.roles_figure(result["setters"], result["solvers"])
    if result["environments"]:
        figures["hint-gain"] = charts.hint_gain_figure(result["environments"])
    if transfer_rows:
        figures["transfer"] = charts.transfer_figure(rounded(transfer_rows))
    if result["observe_uplift"]:
        figures["observe"] = charts.observe_figure(result["observe_uplift"])
    if result["irt"]:
        figures["solve-author"] = charts.solve_author_figure(result["ratings"], result["irt"])
        figures["difficulty"] = charts.difficulty_figure(
            result["irt"]["environments"], {env.uuid: env for env in designs.environments})
    result["figures"] = figures
    return result
