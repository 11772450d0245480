"""Reads about players: lists with counts, detail figures, pass rates as setter and solver."""

from __future__ import annotations

from uuid import UUID

from django.db.models import (
    Avg,
    Case,
    Count,
    FloatField,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from duels.models import Condition, Duel, Environment, Episode, Player, Status


def player_list() -> QuerySet[Player]:
    """All players, by name."""
    return Player.objects.order_by("name")


def _count_subquery(queryset: QuerySet) -> Coalesce:
    counted = queryset.order_by().annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def player_list_with_counts() -> QuerySet[Player]:
    """Players with the number of duels played and environments authored (one query)."""
    duels_as_a = Duel.objects.filter(a=OuterRef("pk")).values("a")
    duels_as_b = Duel.objects.filter(b=OuterRef("pk")).values("b")
    authored = Environment.objects.filter(author=OuterRef("pk")).values("author")
    return player_list().annotate(
        duel_count=_count_subquery(duels_as_a) + _count_subquery(duels_as_b),
        environment_count=_count_subquery(authored),
    )


def player_get(*, player_uuid: UUID) -> Player:
    return get_object_or_404(Player, uuid=player_uuid)


def _pass_rates(episodes: QuerySet[Episode]) -> dict:
    """Unhinted and hinted pass rates (and counts) of finished episodes, leaving out those of a
    duel that failed (infrastructure gave out: not a result)."""
    as_number = Case(When(success=True, then=1.0), default=0.0, output_field=FloatField())
    finished = episodes.filter(status=Status.FINISHED).exclude(
        duel__status=Status.FAILED).order_by()
    figures = finished.aggregate(
        unhinted=Avg(as_number, filter=Q(condition=Condition.UNHINTED)),
        hinted=Avg(as_number, filter=Q(condition=Condition.HINTED)),
        unhinted_n=Count("pk", filter=Q(condition=Condition.UNHINTED)),
        hinted_n=Count("pk", filter=Q(condition=Condition.HINTED)),
    )
    gain = None
    if figures["unhinted"] is not None and figures["hinted"] is not None:
        gain = figures["hinted"] - figures["unhinted"]
    return {**figures, "hint_gain": gain}


def player_pass_rates(*, player: Player) -> dict[str, dict]:
    """Pass rates of others on the player's environments (as setter) and of the player on
    others' environments (as solver), each unhinted and hinted. Two queries."""
    as_setter = Episode.objects.filter(environment__author=player).exclude(solver=player)
    as_solver = Episode.objects.filter(solver=player).exclude(environment__author=player)
    return {"setter": _pass_rates(as_setter), "solver": _pass_rates(as_solver)}


def player_duels(*, player: Player) -> QuerySet[Duel]:
    """Duels the player took part in, newest first."""
    return (
        Duel.objects.filter(Q(a=player) | Q(b=player))
        .select_related("a", "b", "tournament", "env_a", "env_b")
        .order_by("-created_at", "-pk")
    )


def player_environments(*, player: Player) -> QuerySet[Environment]:
    """Environments the player authored, newest first, with their episode counts."""
    return (
        Environment.objects.filter(author=player)
        .annotate(episode_count=Count("episodes"))
        .order_by("-created_at", "-pk")
    )


def player_callable() -> QuerySet[Player]:
    """Players the duel, study and evaluation forms offer: every player except one imported
    from a file that staff have not configured yet (it is never called until then)."""
    return Player.objects.exclude(imported=True, builtin=False).order_by("name")


def player_choices() -> QuerySet[Player]:
    """Players a person may pick for an ad-hoc duel."""
    return player_list().only("pk", "uuid", "name", "builtin", "provider", "model")
