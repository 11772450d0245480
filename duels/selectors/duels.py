"""Reads about duels: filtered and searchable lists, detail with both halves, rate counting."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, Min, Q, QuerySet
from django.shortcuts import get_object_or_404

from duels.models import Condition, Duel, Episode, Outcome, Step
from duels.selectors.search import SearchQueryError, search_words, step_words_q

# Outcomes seen from the chosen player (`DuelFilters.player`), beside the stored ones.
PLAYER_OUTCOMES = {"won": "chosen player won", "lost": "chosen player lost"}


@dataclass(frozen=True)
class DuelFilters:
    """What the duels list may be narrowed by; empty values mean no filter."""

    player: UUID | None = None
    tournament: UUID | None = None
    outcome: str = ""
    status: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    q: str = ""


def _transcript_matches(text: str) -> Q:
    """Duels with a step holding every word of `text` (the full-text index); none when the
    text has no words."""
    try:
        words = search_words(text)
    except SearchQueryError:
        return Q(pk__in=[])
    return Q(pk__in=Step.objects.filter(step_words_q(words)).values("episode__duel_id"))


def duel_list(*, filters: DuelFilters | None = None) -> QuerySet[Duel]:
    """Duels, newest first, with players, tournament and environments joined."""
    filters = filters or DuelFilters()
    duels = Duel.objects.select_related("a", "b", "tournament", "env_a", "env_b")
    if filters.player:
        duels = duels.filter(Q(a__uuid=filters.player) | Q(b__uuid=filters.player))
    if filters.tournament:
        duels = duels.filter(tournament__uuid=filters.tournament)
    if filters.outcome in PLAYER_OUTCOMES:
        # Seen from the chosen player: won as A or as B, lost as either.
        won = (Q(a__uuid=filters.player, outcome=Outcome.A)
               | Q(b__uuid=filters.player, outcome=Outcome.B))
        lost = (Q(a__uuid=filters.player, outcome=Outcome.B)
                | Q(b__uuid=filters.player, outcome=Outcome.A))
        duels = duels.filter(won if filters.outcome == "won" else lost)
    elif filters.outcome:
        duels = duels.filter(outcome=filters.outcome)
    if filters.status:
        duels = duels.filter(status=filters.status)
    if filters.date_from:
        duels = duels.filter(created_at__date__gte=filters.date_from)
    if filters.date_to:
        duels = duels.filter(created_at__date__lte=filters.date_to)
    if filters.q:
        text = filters.q
        duels = duels.filter(
            Q(env_a__title__icontains=text)
            | Q(env_b__title__icontains=text)
            | _transcript_matches(text)
        )
    return duels.order_by("-created_at", "-pk")


def duel_get(*, duel_uuid: UUID) -> Duel:
    return get_object_or_404(
        Duel.objects.select_related(
            "a", "b", "tournament", "env_a", "env_b", "hint_a", "hint_b", "created_by"
        ),
        uuid=duel_uuid,
    )


def duel_halves(*, duel: Duel) -> list[dict]:
    """Both halves of a duel: A's environment solved by B, then B's solved by A.

    Each half has the setter, solver, environment, hint, stored scores and its episodes
    paired by seed: [{"seed", "unhinted", "hinted"}]. One query for all episodes.
    """
    episodes = Episode.objects.filter(duel=duel).order_by("seed", "created_at", "pk")
    by_side: dict[tuple[int | None, int], dict[str, Episode]] = {}
    for episode in episodes:
        by_side.setdefault((episode.environment_id, episode.seed), {})[episode.condition] = episode
    halves = []
    for side, setter, solver, environment, hint in (
        ("a", duel.a, duel.b, duel.env_a, duel.hint_a),
        ("b", duel.b, duel.a, duel.env_b, duel.hint_b),
    ):
        seeds = sorted(seed for env_id, seed in by_side if environment and env_id == environment.pk)
        pairs = []
        for seed in seeds:
            pair = by_side[(environment.pk, seed)]
            pairs.append(
                {
                    "seed": seed,
                    "unhinted": pair.get(Condition.UNHINTED),
                    "hinted": pair.get(Condition.HINTED),
                }
            )
        halves.append(
            {
                "side": side,
                "setter": setter,
                "solver": solver,
                "environment": environment,
                "hint": hint,
                "p_unhinted": getattr(duel, f"p_unhinted_{side}"),
                "p_hinted": getattr(duel, f"p_hinted_{side}"),
                "hint_gain": getattr(duel, f"hint_gain_{side}"),
                "setter_score": getattr(duel, f"setter_score_{side}"),
                "flips": getattr(duel, f"flips_{side}"),
                "forfeit": getattr(duel, f"forfeit_{side}"),
                "void": getattr(duel, f"void_{side}"),
                "evidence": ((environment.validation or {}).get("after_play")
                             if environment is not None and getattr(duel, f"void_{side}")
                             else None),
                "won": duel.outcome == side,
                "pairs": pairs,
            }
        )
    return halves


def duel_recent_by_user(*, user, since: dt.datetime) -> dict:
    """How many duels `user` triggered since `since`, and when the oldest of them was."""
    recent = Duel.objects.filter(created_by=user, created_at__gte=since).order_by()
    return recent.aggregate(count=Count("pk"), oldest=Min("created_at"))
