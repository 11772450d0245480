"""Analytics page: figures from the cached snapshot, table views and CSV downloads."""

from __future__ import annotations

import csv

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import path
from django.views.decorators.http import require_GET, require_POST
from django_tasks import TaskResultStatus

from duels.selectors.analytics_snapshots import analytics_latest_cached
from duels.services.analytics import (
    analytics_for_reader,
    analytics_refresh_underway,
    analytics_request_refresh,
)

TABLE_ROWS = 60
# A text cell starting with one of these is a formula to a spreadsheet.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV cell: None empty, text that a spreadsheet would run as a formula quoted as text
    (a leading apostrophe), everything else as it is (numbers stay numbers)."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


# The figures section depends only on the snapshot: render it once per snapshot and process.
_figures_html: dict[tuple, tuple[str, bool]] = {}


def _figures_section(snapshot) -> tuple[str, bool]:
    """The rendered figures section (escaped HTML) and whether it holds any chart."""
    key = (snapshot.pk, snapshot.computed_at) if snapshot else None
    if key in _figures_html:
        return _figures_html[key]
    data = snapshot.data if snapshot else None
    figures = []
    if data and data.get("enough"):
        for slug, figure in data["figures"].items():
            rows = figure["table"]["rows"]
            figures.append({
                "slug": slug,
                "title": figure["title"],
                "columns": figure["table"]["columns"],
                "rows": rows[:TABLE_ROWS],
                "more_rows": max(0, len(rows) - TABLE_ROWS),
                "apart": figure.get("apart") or [],
            })
    plots = {f["slug"]: data["figures"][f["slug"]]["figure"] for f in figures}
    html = render_to_string("duels/analytics/_figures.html",
                            {"data": data, "figures": figures, "plots": plots})
    _figures_html.clear()
    _figures_html[key] = (html, bool(figures))
    return html, bool(figures)


def _status_context(request: HttpRequest, snapshot, current: bool) -> dict:
    underway = analytics_refresh_underway()
    return {
        "snapshot": snapshot,
        "data": snapshot.data,
        "current": current,
        "refresh_pending": request.user.is_authenticated and TaskResultStatus.READY in underway,
        # Asked for again until newer figures exist: stale figures, or a recomputation someone
        # asked for ("Recompute now") that is queued or running.
        "polling": not current or bool(underway),
    }


@require_GET
@login_required
def analytics_page(request: HttpRequest) -> HttpResponse:
    snapshot, current = analytics_for_reader()
    figures_html, has_figures = _figures_section(snapshot)
    return render(request, "duels/analytics/page.html", {
        **_status_context(request, snapshot, current),
        "figures_html": figures_html,
        "has_figures": has_figures,
        "findings": [{**finding, "verdict_key": finding["verdict"].replace(" ", "_")}
                     for finding in snapshot.data.get("findings") or []],
    })


@require_GET
@login_required
def analytics_status(request: HttpRequest) -> HttpResponse:
    """The page's status line, polled while the shown figures are stale or a recomputation is
    under way; once a newer snapshot than the shown one is current, htmx reloads the page."""
    snapshot, current = analytics_for_reader()
    if current and request.GET.get("shown") != str(snapshot.pk):
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    # Keep asking about the figures the page shows, not a newer snapshot still going stale.
    return render(request, "duels/analytics/_status.html",
                  {**_status_context(request, snapshot, current),
                   "shown": request.GET.get("shown", "")[:20]})


@require_POST
@login_required
def analytics_recompute(request: HttpRequest) -> HttpResponse:
    if analytics_request_refresh(delay_seconds=0):
        messages.success(request, "Recomputation queued; the figures update when a worker runs it.")
    else:
        messages.info(request, "A recomputation is already queued.")
    return redirect("duels:analytics")


@require_GET
@login_required
def analytics_csv(request: HttpRequest, figure: str) -> HttpResponse:
    snapshot = analytics_latest_cached()
    figures = (snapshot.data.get("figures") or {}) if snapshot else {}
    if figure not in figures:
        raise Http404("No such figure in the latest analytics snapshot.")
    return table_csv_response(table=figures[figure]["table"], name=figure)


def table_csv_response(*, table: dict, name: str) -> HttpResponse:
    """A figure's table as a CSV download named `name`.csv."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    writer = csv.writer(response)
    writer.writerow([csv_cell(column) for column in table["columns"]])
    for row in table["rows"]:
        writer.writerow([csv_cell(cell) for cell in row])
    return response


urlpatterns = [
    path("analytics/", analytics_page, name="analytics"),
    path("analytics/recompute/", analytics_recompute, name="analytics_recompute"),
    path("analytics/status/", analytics_status, name="analytics_status"),
    path("analytics/<slug:figure>.csv", analytics_csv, name="analytics_csv"),
]
