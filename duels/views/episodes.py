"""Episode pages: replay (live or finished) and the side-by-side comparison."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from duels.models import Episode
from duels.selectors.compare_many import episode_runs_compare
from duels.selectors.episode_end import episode_end_summary
from duels.selectors.episodes import (
    episode_compare,
    episode_counterpart,
    episode_get,
    episode_recent_pairs,
    episode_siblings,
    episode_steps_after,
    episode_steps_edges,
    episode_steps_window,
)
from duels.selectors.turns import step_model_call
from duels.studies.hint_evidence import compare_hint_mattered
from duels.views.errors import LARGEST_NUMBER, param_int, param_uuid
from duels.words.error_text import error_for_reader

WINDOW_SIZE = 20


@require_GET
@login_required
def episode_detail(request: HttpRequest, episode_uuid: UUID) -> HttpResponse:
    """The replay page. Server-side it shows only the first and last few steps (or one window
    with `?from=N`), so the page stays the same size whatever the episode length; the replay
    viewer loads every step over the websocket."""
    episode = episode_get(episode_uuid=episode_uuid)
    window_start = request.GET.get("from", "")
    if window_start:
        # Past the last step shows the last window (no query for an index no episode has).
        window_start = str(min(param_int(window_start, name="from"), episode.steps))
    context = {
        "episode": episode,
        "window_size": WINDOW_SIZE,
        "end": episode_end_summary(
            status=episode.status,
            success=episode.success,
            end_reason=episode.end_reason,
            error=error_for_reader(episode.error, staff=request.user.is_staff),
            steps=episode.steps,
        ),
    }
    if window_start.isdigit():
        start = int(window_start)
        context["window"] = episode_steps_window(episode=episode, start=start, size=WINDOW_SIZE)
        context["window_start"] = start
        context["previous_start"] = max(start - WINDOW_SIZE, 0) if start else None
        context["next_start"] = (
            start + WINDOW_SIZE if start + WINDOW_SIZE <= episode.steps else None
        )
    else:
        context.update(episode_steps_edges(episode=episode))
    return render(request, "duels/episodes/detail.html", context)


STEPS_PER_FETCH = 100


@require_GET
@login_required
def episode_steps_json(request: HttpRequest, episode_uuid: UUID) -> JsonResponse:
    """`?from=N&count=C`: up to C (≤ 100) step payloads from index N, as the websocket sends
    them. The replay fetches steps back with it after dropping their full text from memory."""
    episode = episode_get(episode_uuid=episode_uuid)
    start = param_int(request.GET.get("from", "0"), name="from")
    count = param_int(request.GET.get("count", "50"), name="count", minimum=1,
                      maximum=STEPS_PER_FETCH)
    steps = episode_steps_after(episode_pk=episode.pk, since=start - 1, limit=count)
    return JsonResponse({"episode": str(episode.uuid), "steps": steps})


@require_GET
@login_required
def episode_step_call(request: HttpRequest, episode_uuid: UUID, index: int) -> HttpResponse:
    """The messages the model call behind step `index` received, and its raw reply.

    `?partial=1` answers the inspector section alone (the replay opens it in place)."""
    episode = episode_get(episode_uuid=episode_uuid)
    call = step_model_call(episode=episode, index=index)
    if call is None:
        raise Http404(f"Step {index} of this episode has no model call (the reset has none).")
    if request.GET.get("partial"):
        return render(request, "duels/turns/_call.html", {"call": call})
    return render(request, "duels/turns/call.html", {"call": call, "episode": episode})


@require_GET
@login_required
def episode_compare_runs(request: HttpRequest, episode_uuid: UUID) -> HttpResponse:
    """Every run of this episode's environment and seed in aligned columns."""
    episode = episode_get(episode_uuid=episode_uuid)
    context = {"episode": episode, **episode_runs_compare(episode=episode)}
    return render(request, "duels/episodes/compare_runs.html", context)


def _compare_page(request: HttpRequest, left: Episode, right: Episode) -> HttpResponse:
    solvers: dict[UUID, str] = {}
    seeds: set[int] = set()
    for sibling in episode_siblings(episode=left):
        solvers.setdefault(sibling.solver.uuid, sibling.solver.name)
        seeds.add(sibling.seed)
    context = {
        "left": left,
        "right": right,
        "comparison": episode_compare(left=left, right=right),
        "picker_solvers": sorted(solvers.items(), key=lambda item: item[1]),
        "picker_seeds": sorted(seeds),
        "same_environment": left.environment_id == right.environment_id,
        "hint_mattered": compare_hint_mattered(left=left, right=right),
    }
    return render(request, "duels/episodes/compare.html", context)


def _episode_for_compare(episode_uuid: UUID) -> Episode:
    return get_object_or_404(
        Episode.objects.select_related("environment__author", "solver", "hint", "duel", "study",
                                    "evaluation__panel", "evaluation__player"),
        uuid=episode_uuid,
    )


@require_GET
@login_required
def compare(request: HttpRequest) -> HttpResponse:
    """Any two episodes side by side: `/compare/?a=<uuid>&b=<uuid>`.

    Without both parameters the page explains what to pick and offers recent pairs.
    """
    raw_left, raw_right = request.GET.get("a", "").strip(), request.GET.get("b", "").strip()
    if not (raw_left and raw_right):
        context = {"a": raw_left, "b": raw_right, "pairs": episode_recent_pairs()}
        return render(request, "duels/episodes/compare_pick.html", context)
    left = _episode_for_compare(param_uuid(raw_left, name="a"))
    right = _episode_for_compare(param_uuid(raw_right, name="b"))
    return _compare_page(request, left, right)


def _nothing_to_compare(request: HttpRequest, episode: Episode, reason: str) -> HttpResponse:
    context = {"episode": episode, "reason": reason}
    return render(request, "duels/episodes/compare_missing.html", context, status=404)


@require_GET
@login_required
def episode_compare_counterpart(request: HttpRequest, episode_uuid: UUID) -> HttpResponse:
    """The same environment, solver and seed in the other condition, unhinted on the left.

    The picker submits `solver` and `seed` to switch to another pair on the same environment.
    """
    episode = episode_get(episode_uuid=episode_uuid)
    solver, seed = request.GET.get("solver", ""), request.GET.get("seed", "")
    if solver or seed:
        siblings = episode_siblings(episode=episode).filter(condition=episode.condition)
        if solver:
            siblings = siblings.filter(solver__uuid=param_uuid(solver, name="solver"))
        if seed:
            siblings = siblings.filter(seed=param_int(seed, name="seed", minimum=-LARGEST_NUMBER))
        chosen = siblings.first()
        if chosen is None:
            return _nothing_to_compare(request, episode, "No episode with that solver and seed.")
        if chosen.pk != episode.pk:
            return redirect(reverse("duels:episode_compare", kwargs={"episode_uuid": chosen.uuid}))
    other = episode_counterpart(episode=episode)
    if other is None:
        return _nothing_to_compare(request, episode, "No run in the other condition yet.")
    unhinted, hinted = (other, episode) if episode.hinted else (episode, other)
    return _compare_page(request, unhinted, hinted)


urlpatterns = [
    path("episodes/<uuid:episode_uuid>/", episode_detail, name="episode_detail"),
    path("episodes/<uuid:episode_uuid>/steps.json", episode_steps_json, name="episode_steps"),
    path(
        "episodes/<uuid:episode_uuid>/steps/<int:index>/call/",
        episode_step_call,
        name="episode_step_call",
    ),
    path(
        "episodes/<uuid:episode_uuid>/compare/",
        episode_compare_counterpart,
        name="episode_compare",
    ),
    path("episodes/<uuid:episode_uuid>/runs/", episode_compare_runs, name="episode_runs"),
    path("compare/", compare, name="compare"),
]
