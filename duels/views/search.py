"""Search pages: words across every transcript, and text within one episode's transcript."""

from __future__ import annotations

from urllib.parse import urlencode
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.forms.dashboard import filter_form_problems
from duels.forms.episodes import EpisodeFilterForm
from duels.selectors.episodes import episode_get
from duels.selectors.search import (
    FACETED_SCAN,
    SearchQueryError,
    episode_search,
    transcripts_search,
)
from duels.views.errors import param_int
from duels.views.limits import search_rate_limited


@require_GET
@login_required
@search_rate_limited
def transcripts_search_page(request: HttpRequest) -> HttpResponse:
    """`/duels/search/?q=words`: steps of any episode holding every word, newest first,
    narrowed by the episode list's facets (solver, setter, condition, outcome, environment,
    tournament, study)."""
    query = request.GET.get("q", "").strip()
    facets = {key: value for key, value in request.GET.items()
              if key in EpisodeFilterForm.FACETS and value}
    form = EpisodeFilterForm(facets or None)
    problems = filter_form_problems(form)
    context: dict = {"query": query, "form": form, "filter_problems": problems,
                     "scan_limit": FACETED_SCAN,
                     "facets": urlencode(facets)}
    status = 400 if problems else 200
    if query and not problems:
        before = request.GET.get("before", "")
        try:
            context["results"] = transcripts_search(
                query=query, before=param_int(before, name="before") if before else None,
                filters=form.filters(),
            )
        except SearchQueryError as exc:
            context["problem"] = str(exc)
            status = 400
    return render(request, "duels/search/page.html", context, status=status)


@require_GET
@login_required
@search_rate_limited
def episode_search_json(request: HttpRequest, episode_uuid: UUID) -> JsonResponse:
    """`?q=text`: the indices of the episode's steps containing the text, in order."""
    episode = episode_get(episode_uuid=episode_uuid)
    try:
        indices = episode_search(episode=episode, query=request.GET.get("q", ""))
    except SearchQueryError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"episode": str(episode.uuid), "query": request.GET.get("q", ""),
                         "indices": indices})


urlpatterns = [
    path("duels/search/", transcripts_search_page, name="transcripts_search"),
    path("episodes/<uuid:episode_uuid>/search.json", episode_search_json, name="episode_search"),
]
