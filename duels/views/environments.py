"""Environment pages: filtered list and detail (highlighted source, hints, report, episodes)."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.forms.dashboard import EnvironmentFilterForm, filter_form_problems
from duels.selectors.designs import design_authors, design_duels, design_get
from duels.selectors.environment_card import environment_card
from duels.selectors.environments import (
    environment_episodes,
    environment_families,
    environment_get,
    environment_list,
    environment_outcomes,
)
from duels.selectors.labels import design_label_states
from duels.selectors.source_view import environment_source_lines
from duels.studies.selectors import version_field_results
from duels.views.common import paginate

DESIGN_DUELS_SHOWN = 100


@require_GET
@login_required
def environment_list_page(request: HttpRequest) -> HttpResponse:
    form = EnvironmentFilterForm(request.GET or None)
    environments = environment_list(filters=form.filters() if form.is_bound else None)
    problems = filter_form_problems(form)
    page = paginate(request, environments)
    page.object_list = list(page.object_list)
    authors = design_authors(content_hashes=[row.content_hash for row in page.object_list])
    for row in page.object_list:
        row.design_authors = authors.get(row.content_hash, [])
    context = {
        "form": form,
        "page": page,
        "families": environment_families(),
        "filter_problems": problems,
    }
    template = "duels/environments/list.html"
    if request.htmx and request.htmx.target == "environment-results":
        template += "#environment-results"
    return render(request, template, context, status=400 if problems else 200)


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _line_range(request: HttpRequest, *, source: str) -> tuple[int | None, int | None]:
    """`?lines=12-20` (or `?lines=7`): the source lines to mark, e.g. an annotation's range.

    Clamped to the source's lines; a malformed value is a 400 saying what is expected.
    """
    raw = request.GET.get("lines", "").strip()
    if not raw:
        return None, None
    start, dash, end = raw.partition("-")
    if not _is_number(start) or (dash and not _is_number(end)):
        raise BadRequest(f"lines must be a line number or a range such as 12-20, not {raw[:40]!r}")
    last_line = source.count("\n") + 1
    # Compared as text first: a thousand-digit number is clamped without being converted.
    first, last = (
        min(int(part) if len(part) <= 9 else last_line, last_line) for part in (start, end or start)
    )
    first, last = max(first, 1), max(last, 1)
    return (first, last) if first <= last else (last, first)


@require_GET
@login_required
def environment_detail(request: HttpRequest, environment_uuid: UUID) -> HttpResponse:
    environment = environment_get(environment_uuid=environment_uuid)
    line_start, line_end = _line_range(request, source=environment.source)
    design = design_get(environment=environment)
    duels = design_duels(content_hash=design.content_hash)
    labels = design_label_states(design=environment.content_hash)
    context = {
        "environment": environment,
        "design": design,
        "labels_holding": labels.excluded.get(environment.content_hash, []),
        "labels_pending": labels.pending.get(environment.content_hash, []),
        "design_duels": duels[:DESIGN_DUELS_SHOWN],
        "design_duel_count": len(duels) if len(duels) < DESIGN_DUELS_SHOWN else duels.count(),
        "hints": environment.hints.all(),
        "card": environment_card(outcomes=environment_outcomes(environment=environment)),
        "episodes": paginate(request, environment_episodes(environment=environment), per_page=50),
        "line_start": line_start,
        "line_end": line_end,
        "checks": (environment.validation or {}).get("checks", []),
        "source_lines": environment_source_lines(
            environment=environment, line_start=line_start, line_end=line_end
        ),
        "study_version": version_field_results(environment=environment),
    }
    return render(request, "duels/environments/detail.html", context)


urlpatterns = [
    path("environments/", environment_list_page, name="environment_list"),
    path("environments/<uuid:environment_uuid>/", environment_detail, name="environment_detail"),
]
