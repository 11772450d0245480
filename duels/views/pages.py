"""Dashboard page, and the list of every page route (each area in its own module)."""

from __future__ import annotations

from functools import cache

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from duels.selectors.dashboard import (
    dashboard_active_studies,
    dashboard_active_tournaments,
    dashboard_flywheel_alarms,
    dashboard_latest_duels,
    dashboard_leaderboard,
    dashboard_players,
)
from duels.views import (
    duels_pages,
    environments,
    episode_list,
    episodes,
    glossary,
    panel_create,
    panel_import,
    panels,
    players,
    replay_files,
    search,
    studies,
    tournaments,
)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Running tournaments with live progress, the latest duels and the leaderboard.

    Signed-out visitors get a short landing page (what this is, the players, sign in); every
    other page needs sign-in.
    """
    if not request.user.is_authenticated:
        return render(request, "duels/landing.html", {"players": dashboard_players()})
    tournaments = dashboard_active_tournaments()
    studies = dashboard_active_studies()
    if request.htmx and request.htmx.target == "dashboard-progress":
        # The 2-second progress poll needs the running tournaments and studies, nothing else.
        return render(request, "duels/home.html#dashboard-progress",
                      {"tournaments": tournaments, "studies": studies})
    context = {
        "tournaments": tournaments,
        "studies": studies,
        "duels": dashboard_latest_duels(),
        "leaderboard": dashboard_leaderboard(),
        "players": dashboard_players(),
        "flywheel_alarms": dashboard_flywheel_alarms(),
    }
    return render(request, "duels/home.html", context)


@cache
def _favicon() -> bytes:
    with open(finders.find("favicon.svg"), "rb") as handle:
        return handle.read()


@require_GET
@cache_control(public=True, max_age=86400)
def favicon(request: HttpRequest) -> HttpResponse:
    """`/favicon.ico`, which browsers ask for whatever the page names: the site's icon."""
    return HttpResponse(_favicon(), content_type="image/svg+xml")


urlpatterns = [
    path("", home, name="home"),
    path("favicon.ico", favicon, name="favicon"),
    *search.urlpatterns,
    *replay_files.urlpatterns,
    *players.urlpatterns,
    *environments.urlpatterns,
    *duels_pages.urlpatterns,
    *episode_list.urlpatterns,
    *episodes.urlpatterns,
    *tournaments.urlpatterns,
    *studies.urlpatterns,
    *panel_create.urlpatterns,
    *panel_import.urlpatterns,
    *panels.urlpatterns,
    *glossary.urlpatterns,
]
