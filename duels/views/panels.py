"""Panel pages: the list with each panel's manifest hash, and one panel's versions and the
outside outcomes imported on it."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.engine.validation import environment_invalid_reason
from duels.panels.selectors import panel_entries, panel_get, panel_list, panel_outcome_summary
from duels.views.common import paginate


@require_GET
@login_required
def panel_list_page(request: HttpRequest) -> HttpResponse:
    return render(request, "duels/panels/list.html", {"page": paginate(request, panel_list())})


@require_GET
@login_required
def panel_detail(request: HttpRequest, panel_uuid: UUID) -> HttpResponse:
    panel = panel_get(panel_uuid)
    entries = [{"entry": entry, "invalid_reason": "" if entry.environment.is_valid
                else environment_invalid_reason(environment=entry.environment)}
               for entry in panel_entries(panel)]
    return render(request, "duels/panels/detail.html", {
        "panel": panel, "entries": entries, "outcomes": panel_outcome_summary(panel)})


urlpatterns = [
    path("panels/", panel_list_page, name="panel_list"),
    path("panels/<uuid:panel_uuid>/", panel_detail, name="panel_detail"),
]
