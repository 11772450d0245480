"""Reads for the dashboard: active tournaments, latest duels, leaderboard summary."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.db.models import Count, Q
from django.utils import timezone

from duels.analytics.flywheel_charts import flywheel_latest_alarms
from duels.analytics.ranking_rule import MIN_DUELS_TO_RANK
from duels.models import Duel, Player, Status, Study
from duels.selectors.analytics_snapshots import analytics_latest_cached
from duels.selectors.duels import duel_list
from duels.selectors.players import player_list
from duels.selectors.tournaments import tournament_list, tournament_list_active

RECENTLY_FINISHED = dt.timedelta(minutes=30)


def dashboard_active_tournaments(*, limit: int = 10) -> list:
    """Pending and running tournaments, then those that ended in the last half hour (so a
    watcher sees one reach 100% and its final state instead of it vanishing). Two queries."""
    active = list(tournament_list_active()[:limit])
    ended = tournament_list().filter(
        status__in=[Status.FINISHED, Status.FAILED, Status.CANCELLED],
        finished_at__gte=timezone.now() - RECENTLY_FINISHED,
    )
    return active + list(ended[: max(limit - len(active), 0)])


def dashboard_active_studies(*, limit: int = 5) -> list:
    """Pending and running studies and those that ended in the last half hour, newest first
    (one query; their stored figures are not read)."""
    recent = timezone.now() - RECENTLY_FINISHED
    return list(Study.objects.defer("figures").filter(
        Q(status__in=[Status.PENDING, Status.RUNNING]) | Q(finished_at__gte=recent))
        .order_by("-created_at", "-pk")[:limit])


def dashboard_latest_duels(*, limit: int = 10) -> list[Duel]:
    """Running duels first (newest first), then the newest of the others: a demo that is still
    starting has many pending duels, and a watcher looks for the one that streams. Two queries,
    each down an index (status, created_at)."""
    running = list(duel_list().filter(status=Status.RUNNING)[:limit])
    others = duel_list().exclude(status=Status.RUNNING)
    return running + list(others[: max(limit - len(running), 0)])


def dashboard_leaderboard(*, limit: int = 10) -> dict:
    """Ratings from the latest analytics snapshot when there is one, and always a
    win/draw/loss table over finished duels (three queries)."""
    latest = analytics_latest_cached()
    ratings = (latest.data or {}).get("ratings") if latest else None
    tally: dict[int, dict[str, int]] = defaultdict(lambda: {"wins": 0, "draws": 0, "losses": 0})
    finished = Duel.objects.filter(status=Status.FINISHED, outcome__isnull=False).order_by()
    for side, other in (("a", "b"), ("b", "a")):
        rows = finished.values(f"{side}_id", "outcome").annotate(n=Count("pk"))
        for row in rows:
            record = tally[row[f"{side}_id"]]
            if row["outcome"] == side:
                record["wins"] += row["n"]
            elif row["outcome"] == other:
                record["losses"] += row["n"]
            else:
                record["draws"] += row["n"]
    players = Player.objects.in_bulk(list(tally)) if tally else {}
    table = []
    for player_id, record in tally.items():
        played = record["wins"] + record["draws"] + record["losses"]
        score = (record["wins"] + 0.5 * record["draws"]) / played
        table.append({"player": players[player_id], "played": played, "score": score, **record})
    table.sort(key=lambda row: (-row["score"], -row["played"], row["player"].name))
    return {
        **leaderboard_split(ratings, limit=limit),
        "computed_at": latest.computed_at if latest else None,
        "table": table[:limit],
    }


def leaderboard_split(ratings: list[dict] | None, *, limit: int | None = None) -> dict:
    """The ranked rows (first `limit`) and the players listed apart, unranked: the ratings
    computation leaves a player's rank empty below MIN_DUELS_TO_RANK duels or without an
    interval, and every leaderboard shows exactly that."""
    ranked = [row for row in ratings or () if row.get("rank") is not None]
    return {
        "ratings": ranked[:limit] if ratings else None,
        "unranked": [row for row in ratings or () if row.get("rank") is None],
        "min_duels": MIN_DUELS_TO_RANK,
    }


def dashboard_players(*, limit: int = 12) -> dict:
    """The first players by name and how many there are (two queries whatever the count)."""
    players = player_list()
    return {"shown": list(players[:limit]), "total": players.count()}


def dashboard_flywheel_alarms() -> list[dict]:
    """The flywheel alarms of the latest period in the newest analytics snapshot, about the
    pool people and real models wrote: none while every design is one of the seeded built-in
    players' (a first run's demo players repeat their few scripted designs by construction,
    which is no collapse to warn about), and never one naming such a setter. /flywheel/ shows
    every alarm."""
    from duels.models import Environment
    from duels.players.builtin import BUILTIN_PLAYER_SPECS

    snapshot = analytics_latest_cached()
    alarms = flywheel_latest_alarms(snapshot.data.get("flywheel") if snapshot else None)
    demo = [spec["name"] for spec in BUILTIN_PLAYER_SPECS]
    if not alarms or not Environment.objects.exclude(author__builtin=True,
                                                     author__name__in=demo).exists():
        return []
    return [alarm for alarm in alarms if alarm.get("setter") not in demo]
