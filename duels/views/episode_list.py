"""`/episodes/`: every episode, filtered by the facets of duels/forms/episodes.py."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.forms.dashboard import filter_form_problems
from duels.forms.episodes import EpisodeFilterForm
from duels.selectors.episode_list import PAGE_SIZE, episode_list_page
from duels.views.errors import param_int


@require_GET
@login_required
def episode_list_view(request: HttpRequest) -> HttpResponse:
    """Newest first, PAGE_SIZE a page; `?before=N` continues after the page that ended there."""
    facets = {key: value for key, value in request.GET.items()
              if key in EpisodeFilterForm.FACETS and value}
    form = EpisodeFilterForm(facets or None)
    problems = filter_form_problems(form)
    before = request.GET.get("before", "")
    page = episode_list_page(filters=form.filters(),
                             before=param_int(before, name="before") if before else None)
    template = "duels/episodes/list.html"
    if request.htmx and request.htmx.target == "episode-results":
        template += "#episode-results"
    context = {"form": form, "page": page, "page_size": PAGE_SIZE, "filter_problems": problems,
               "facets": urlencode(facets)}
    return render(request, template, context, status=400 if problems else 200)


urlpatterns = [
    path("episodes/", episode_list_view, name="episode_list"),
]
