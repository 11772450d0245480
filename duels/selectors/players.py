"""Reads about players."""

from __future__ import annotations

from django.db.models import QuerySet

from duels.models import Player


def player_list() -> QuerySet[Player]:
    """All players, by name."""
    return Player.objects.order_by("name")
