"""Standings of one tournament: wins/draws/losses, duel rating, setter and solver strength per
player, and the setter × solver crosstable of hint gain.

Built from the tournament's finished duels (their stored scores, written by the engine from the
one scoring rule) and its unhinted episodes: two queries whatever the tournament size.
"""

from __future__ import annotations

import math
from collections import defaultdict
from statistics import mean

from duels.models import Condition, Duel, EnvironmentStatus, Episode, Status, Tournament

RATING_RESAMPLES = 200


def _solver_strength(*, tournament: Tournament) -> dict[int, tuple[int, int]]:
    """(passed, episodes) per solver id: unhinted episodes on other players' environments."""
    rows = (
        Episode.objects.filter(
            duel__tournament=tournament,
            condition=Condition.UNHINTED,
            status__in=[Status.FINISHED, Status.FAILED],
        )
        .exclude(environment__author_id=None)
        # A voided environment's episodes count nowhere (duels.engine.voiding).
        .exclude(environment__status=EnvironmentStatus.INVALID)
        .values_list("solver_id", "environment__author_id", "status", "success")
    )
    tally: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for solver_id, author_id, status, success in rows:
        if solver_id == author_id or status != Status.FINISHED:
            continue  # own environments do not count; a failed (infrastructure) run is unscored
        tally[solver_id][0] += bool(success)
        tally[solver_id][1] += 1
    return {solver_id: (passed, total) for solver_id, (passed, total) in tally.items()}


def tournament_standings(*, tournament: Tournament) -> dict:
    """`{"rows": [...], "setters": [player], "solvers": [player], "cells": {(setter, solver)}}`.

    Each row: player, played, wins, draws, losses, points, rating, setter_strength (mean setter
    score as setter, forfeits 0), setter_sides, solver_strength (unhinted pass rate on others'
    environments), solver_episodes. Cells hold the mean hint gain of the setter's environments
    against that solver and how many duel sides it averages.
    """
    duels = list(
        Duel.objects.filter(tournament=tournament, status=Status.FINISHED)
        .select_related("a", "b")
        .order_by("round_index", "pk")
    )
    players = {player.pk: player for player in tournament.players.all()}
    record = defaultdict(lambda: {"wins": 0, "draws": 0, "losses": 0, "scores": []})
    gains: dict[tuple[int, int], list[float]] = defaultdict(list)
    games = []
    for duel in duels:
        players.setdefault(duel.a_id, duel.a)
        players.setdefault(duel.b_id, duel.b)
        for side, setter, solver in (("a", duel.a, duel.b), ("b", duel.b, duel.a)):
            score = getattr(duel, f"setter_score_{side}")
            if getattr(duel, f"forfeit_{side}"):
                score = 0.0
            if score is not None:
                record[setter.pk]["scores"].append(score)
            gain = getattr(duel, f"hint_gain_{side}")
            if gain is not None and not getattr(duel, f"forfeit_{side}"):
                gains[(setter.pk, solver.pk)].append(gain)
        if duel.outcome is None:
            continue
        points_a = {"a": 1.0, "b": 0.0, "draw": 0.5}[duel.outcome]
        games.append((duel.a.name, duel.b.name, points_a))
        for pk, points in ((duel.a_id, points_a), (duel.b_id, 1.0 - points_a)):
            key = "wins" if points == 1 else "losses" if points == 0 else "draws"
            record[pk][key] += 1
    from duels.analytics.ratings import ratings_fit  # scipy: imported when a table is fitted

    ratings = ratings_fit(
        players=[player.name for player in players.values()],
        games=games,
        resamples=RATING_RESAMPLES,
    )
    rating_by_name = (
        dict(zip(ratings.players, (float(value) for value in ratings.rating), strict=True))
        if ratings
        else {}
    )
    solving = _solver_strength(tournament=tournament)
    rows = []
    for pk, player in players.items():
        tally = record[pk]
        played = tally["wins"] + tally["draws"] + tally["losses"]
        passed, episodes = solving.get(pk, (0, 0))
        rating = rating_by_name.get(player.name)
        rows.append(
            {
                "player": player,
                "played": played,
                "wins": tally["wins"],
                "draws": tally["draws"],
                "losses": tally["losses"],
                "points": tally["wins"] + 0.5 * tally["draws"],
                "rating": None if rating is None or math.isnan(rating) else rating,
                "setter_strength": mean(tally["scores"]) if tally["scores"] else None,
                "setter_sides": len(tally["scores"]),
                "solver_strength": passed / episodes if episodes else None,
                "solver_episodes": episodes,
            }
        )
    rows.sort(key=lambda row: (-row["points"], -(row["rating"] or 0), row["player"].name))
    ordered = [row["player"] for row in rows]
    cells = {
        (setter_pk, solver_pk): {"gain": mean(values), "n": len(values)}
        for (setter_pk, solver_pk), values in gains.items()
    }
    grid = [
        {
            "setter": setter,
            "cells": [
                cells.get((setter.pk, solver.pk)) if setter.pk != solver.pk else "self"
                for solver in ordered
            ],
        }
        for setter in ordered
    ]
    return {"rows": rows, "players": ordered, "grid": grid, "duels": len(duels)}
