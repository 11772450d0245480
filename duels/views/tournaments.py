"""Tournament pages: list, detail with live progress, cancel, publish as a static site."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods

from duels.selectors.costs import tournament_spend
from duels.selectors.standings import tournament_standings
from duels.selectors.tournaments import tournament_duels, tournament_get, tournament_list
from duels.services.access import (
    TOURNAMENT_CANCEL_DENIED,
    tournament_can_cancel,
    tournament_can_publish,
)
from duels.views.common import cancel_confirmed, paginate


@require_GET
@login_required
def tournament_list_page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "duels/tournaments/list.html", {"page": paginate(request, tournament_list())}
    )


@require_GET
@login_required
def tournament_detail(request: HttpRequest, tournament_uuid: UUID) -> HttpResponse:
    tournament = tournament_get(tournament_uuid=tournament_uuid)
    context = {
        "tournament": tournament,
        "duels": paginate(request, tournament_duels(tournament=tournament), per_page=50),
        "can_cancel": tournament_can_cancel(tournament=tournament, user=request.user),
        "can_publish": tournament_can_publish(tournament=tournament, user=request.user),
        "standings": tournament_standings(tournament=tournament),
        "spend": tournament_spend(tournament=tournament),
    }
    template = "duels/tournaments/detail.html"
    if request.htmx and request.htmx.target == "tournament-progress":
        template += "#tournament-progress"
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
@login_required
def tournament_cancel_view(request: HttpRequest, tournament_uuid: UUID) -> HttpResponse:
    """Cancel a tournament after asking (as for a duel: only `confirm=yes` cancels)."""
    from duels.engine.tournaments import tournament_cancel

    tournament = tournament_get(tournament_uuid=tournament_uuid)
    if not tournament_can_cancel(tournament=tournament, user=request.user):
        raise PermissionDenied(TOURNAMENT_CANCEL_DENIED)
    if not tournament.is_done and not cancel_confirmed(request):
        return render(request, "duels/confirm_cancel.html", {
            "kind": "tournament", "name": tournament.name,
            "status": tournament.get_status_display(),
            "consequence": "Cancelling stops every duel still to play: running episodes stop "
                           "after their step, and unfinished duels get no result.",
            "action_url": reverse("duels:tournament_cancel", args=[tournament.uuid]),
            "back_url": reverse("duels:tournament_detail", args=[tournament.uuid]),
        })
    if tournament.is_done:
        messages.info(request, f"Tournament already {tournament.status}.")
    else:
        tournament_cancel(tournament=tournament)
        messages.success(request, "Tournament cancelled: running episodes stop after their step.")
    return redirect("duels:tournament_detail", tournament_uuid=tournament.uuid)


urlpatterns = [
    path("tournaments/", tournament_list_page, name="tournament_list"),
    path("tournaments/<uuid:tournament_uuid>/", tournament_detail, name="tournament_detail"),
    path(
        "tournaments/<uuid:tournament_uuid>/cancel/",
        tournament_cancel_view,
        name="tournament_cancel",
    ),
]
