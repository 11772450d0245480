"""Reads about tournaments: lists with progress, detail, the duels inside."""

from __future__ import annotations

from uuid import UUID

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from duels.models import Duel, Status, Tournament


def tournament_list() -> QuerySet[Tournament]:
    """Tournaments, newest first, with their player counts."""
    return Tournament.objects.annotate(player_count=Count("players")).order_by("-created_at", "-pk")


def tournament_list_active() -> QuerySet[Tournament]:
    """Tournaments that are pending or running (for live progress bars)."""
    return tournament_list().filter(status__in=[Status.PENDING, Status.RUNNING])


def tournament_get(*, tournament_uuid: UUID) -> Tournament:
    return get_object_or_404(
        Tournament.objects.select_related("created_by").prefetch_related("players"),
        uuid=tournament_uuid,
    )


def tournament_duels(*, tournament: Tournament) -> QuerySet[Duel]:
    """The duels of a tournament by round, then creation order."""
    return (
        Duel.objects.filter(tournament=tournament)
        .select_related("a", "b", "env_a", "env_b", "tournament")
        .order_by("round_index", "created_at", "pk")
    )
