"""Environment pages: filtered list and detail (highlighted source, hints, report, episodes)."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.forms import EnvironmentFilterForm
from duels.selectors.annotations import annotated_line_ranges
from duels.selectors.environments import (
    environment_episodes,
    environment_families,
    environment_get,
    environment_list,
    environment_outcomes,
)
from duels.views.common import paginate


@require_GET
@login_required
def environment_list_page(request: HttpRequest) -> HttpResponse:
    form = EnvironmentFilterForm(request.GET or None)
    environments = environment_list(filters=form.filters() if form.is_bound else None)
    context = {
        "form": form,
        "page": paginate(request, environments),
        "families": environment_families(),
    }
    template = "duels/environments/list.html"
    if request.htmx and request.htmx.target == "environment-results":
        template += "#environment-results"
    return render(request, template, context)


def _line_range(request: HttpRequest) -> tuple[int | None, int | None]:
    """`?lines=12-20` (or `?lines=7`): the source lines to mark, e.g. an annotation's range."""
    raw = request.GET.get("lines", "")
    start, _, end = raw.partition("-")
    if not start.isdigit():
        return None, None
    end = end if end.isdigit() else start
    first, last = int(start), int(end)
    return (first, last) if first <= last else (last, first)


@require_GET
@login_required
def environment_detail(request: HttpRequest, environment_uuid: UUID) -> HttpResponse:
    environment = environment_get(environment_uuid=environment_uuid)
    line_start, line_end = _line_range(request)
    context = {
        "environment": environment,
        "hints": environment.hints.all(),
        "outcomes": environment_outcomes(environment=environment),
        "episodes": paginate(request, environment_episodes(environment=environment), per_page=50),
        "line_start": line_start,
        "line_end": line_end,
        "checks": (environment.validation or {}).get("checks", []),
        "annotated_ranges": annotated_line_ranges(environment=environment),
    }
    return render(request, "duels/environments/detail.html", context)


urlpatterns = [
    path("environments/", environment_list_page, name="environment_list"),
    path("environments/<uuid:environment_uuid>/", environment_detail, name="environment_detail"),
]
