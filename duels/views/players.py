"""Player pages: list and detail."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from duels.selectors.compliance import player_format_errors
from duels.selectors.players import (
    player_duels,
    player_environments,
    player_get,
    player_list_with_counts,
    player_pass_rates,
)
from duels.selectors.ratings import player_ratings
from duels.services.access import PLAYER_SIZE_DENIED, player_can_set_size
from duels.services.players import player_set_size
from duels.views.common import paginate


@require_GET
@login_required
def player_list_page(request: HttpRequest) -> HttpResponse:
    page = paginate(request, player_list_with_counts(), per_page=50)
    return render(request, "duels/players/list.html", {"page": page})


@require_GET
@login_required
def player_detail(request: HttpRequest, player_uuid: UUID) -> HttpResponse:
    player = player_get(player_uuid=player_uuid)
    context = {
        "player": player,
        "rates": player_pass_rates(player=player),
        "duels": paginate(request, player_duels(player=player)),
        "environments": player_environments(player=player)[:50],
        "ratings": player_ratings(player_name=player.name),
        "format_errors": player_format_errors(player=player),
        "can_set_size": player_can_set_size(user=request.user),
    }
    return render(request, "duels/players/detail.html", context)


@require_POST
@login_required
def player_size(request: HttpRequest, player_uuid: UUID) -> HttpResponse:
    """Enter (or clear, with an empty field) a player's size in billions of parameters."""
    player = player_get(player_uuid=player_uuid)
    if not player_can_set_size(user=request.user):
        raise PermissionDenied(PLAYER_SIZE_DENIED)
    text = request.POST.get("parameters_b", "").strip()
    try:
        player_set_size(player=player, parameters_b=float(text) if text else None)
    except (ValueError, ValidationError):
        messages.error(request, f"{text!r} is not a size: write the billions of parameters "
                                "as a positive number (7 for a 7B model), or leave it empty.")
    else:
        messages.success(request, f"Size of {player.name} "
                                  f"{'set' if text else 'cleared'}.")
    return redirect("duels:player_detail", player_uuid=player.uuid)


urlpatterns = [
    path("players/", player_list_page, name="player_list"),
    path("players/<uuid:player_uuid>/", player_detail, name="player_detail"),
    path("players/<uuid:player_uuid>/size/", player_size, name="player_size"),
]
