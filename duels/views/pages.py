"""Dashboard pages."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.selectors.players import player_list


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "duels/home.html", {"players": player_list()})


urlpatterns = [
    path("", home, name="home"),
]
