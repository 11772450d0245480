"""Player pages: list and detail."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.selectors.compliance import player_format_errors
from duels.selectors.players import (
    player_duels,
    player_environments,
    player_get,
    player_list_with_counts,
    player_pass_rates,
)
from duels.selectors.ratings import player_ratings
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
    }
    return render(request, "duels/players/detail.html", context)


urlpatterns = [
    path("players/", player_list_page, name="player_list"),
    path("players/<uuid:player_uuid>/", player_detail, name="player_detail"),
]
