"""Duel pages: filtered/searchable list, detail that follows a running duel, ad-hoc trigger."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from duels.forms.dashboard import DuelFilterForm, DuelTriggerForm, filter_form_problems
from duels.models import Player
from duels.selectors.compliance import duel_format_errors
from duels.selectors.duel_explain import duel_explanation
from duels.selectors.duels import duel_get, duel_halves, duel_list
from duels.selectors.player_checks import player_readiness
from duels.selectors.turns import duel_setter_calls, duel_step_totals
from duels.services.access import (
    DUEL_CANCEL_DENIED,
    DUEL_START_DENIED,
    duel_can_cancel,
    duel_can_start,
)
from duels.services.duels import DuelRateLimited, duel_rate_limit_message, duel_start_for_user
from duels.views.common import cancel_confirmed, paginate
from duels.views.limits import search_rate_limited


@require_GET
@login_required
@search_rate_limited
def duel_list_page(request: HttpRequest) -> HttpResponse:
    form = DuelFilterForm(request.GET or None)
    duels = duel_list(filters=form.filters() if form.is_bound else None)
    template = "duels/duels/list.html"
    if request.htmx and request.htmx.target == "duel-results":
        template += "#duel-results"
    problems = filter_form_problems(form)
    context = {"form": form, "page": paginate(request, duels), "filter_problems": problems}
    return render(request, template, context, status=400 if problems else 200)


@require_GET
@login_required
def duel_detail(request: HttpRequest, duel_uuid: UUID) -> HttpResponse:
    duel = duel_get(duel_uuid=duel_uuid)
    template = "duels/duels/detail.html"
    if request.htmx and request.htmx.target == "duel-live":
        template += "#duel-live"
    halves = duel_halves(duel=duel)
    why = duel_explanation(duel=duel, halves=halves)
    context = {
        "duel": duel, "halves": halves, "why": why,
        "can_cancel": duel_can_cancel(duel=duel, user=request.user),
        "format_errors": duel_format_errors(duel=duel),
    }
    context["totals"] = duel_step_totals(duel=duel)
    context["setter_calls"] = duel_setter_calls(duel=duel)
    if template.endswith("#duel-live"):
        # The live refresh also swaps the totals in place (out of band), and the setter calls
        # when their number changed or the duel just ended, so a page watched to the end shows
        # what a reload shows; an unchanged list is left alone (an opened call stays open).
        shown = request.GET.get("calls_shown", "")
        context["oob_totals"] = True
        context["oob_calls"] = duel.is_done or shown != str(len(context["setter_calls"]))
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
@login_required
def duel_new(request: HttpRequest) -> HttpResponse:
    """The ad-hoc duel form; on a valid POST the duel is created, enqueued and followed.

    The "Estimate cost" button posts the same form with `estimate`: nothing is started, the form
    comes back with the expected model calls and cost range of that duel.
    """
    if not duel_can_start(user=request.user):
        raise PermissionDenied(DUEL_START_DENIED)
    chosen = _chosen_players(request.GET)
    form = DuelTriggerForm(request.POST or None,
                           initial={side: player.uuid for side, player in chosen.items()})
    status = 200
    estimate = None
    if request.method == "POST" and "estimate" in request.POST:
        if form.is_valid():
            from duels.selectors.costs import duel_projection

            estimate = duel_projection(a=form.cleaned_data["a"], b=form.cleaned_data["b"],
                                       attempts=form.cleaned_data["attempts"])
        else:
            status = 400
    elif request.method == "POST":
        limited = duel_rate_limit_message(user=request.user)
        if limited:
            form.add_error(None, limited)
            status = 429
        elif form.is_valid() and form.refuse_uncallable():
            status = 400
        elif form.is_valid():
            from duels.engine.duels import DuelError
            from duels.engine.queue import duel_enqueue

            try:
                duel = duel_start_for_user(
                    user=request.user,
                    a=form.cleaned_data["a"],
                    b=form.cleaned_data["b"],
                    attempts=form.cleaned_data["attempts"],
                    observe=form.cleaned_data["observe"],
                    cost_cap=form.cleaned_data["cost_cap"],
                )
            except DuelRateLimited as error:
                form.add_error(None, str(error))
                status = 429
            except DuelError as error:
                form.add_error(None, str(error))
                status = 400
            else:
                duel_enqueue(duel=duel)
                messages.success(request, f"Duel {duel.a.name} vs {duel.b.name} queued.")
                url = reverse("duels:duel_detail", kwargs={"duel_uuid": duel.uuid})
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
        else:
            status = 400
    template = "duels/duels/new.html"
    if request.htmx:
        template += "#duel-form"
    if request.method == "POST":
        chosen = _chosen_players(request.POST)
    context = {"form": form, "estimate": estimate, **_checks_context(chosen)}
    return render(request, template, context, status=status)


def _chosen_players(data) -> dict[str, Player]:
    """The players named by `a` and `b` (uuids) in a query or a form, those that exist."""
    wanted = {side: data.get(side, "") for side in ("a", "b")}
    uuids = []
    for value in wanted.values():
        try:
            uuids.append(UUID(str(value)))
        except ValueError:
            continue
    found = {str(player.uuid): player for player in Player.objects.filter(uuid__in=uuids)}
    return {side: found[value] for side, value in wanted.items() if value in found}


def _checks_context(chosen: dict[str, Player], *, waiting: str = "") -> dict:
    players = list(dict.fromkeys(chosen.values()))
    return {"readiness": player_readiness(players=players), "chosen": chosen,
            "waiting": waiting}


@require_GET
@login_required
def duel_player_checks(request: HttpRequest) -> HttpResponse:
    """The duel form's player checks for the chosen `a` and `b` (the form swaps this in when a
    player is chosen; it polls while a check it asked for is under way)."""
    if not duel_can_start(user=request.user):
        raise PermissionDenied(DUEL_START_DENIED)
    chosen = _chosen_players(request.GET)
    waiting, since = request.GET.get("waiting", "")[:40], request.GET.get("since", "")[:40]
    context = _checks_context(chosen, waiting=waiting)
    asked = _parsed_time(since)
    for row in context["readiness"]:
        if str(row.player.uuid) != waiting:
            continue
        if asked is None or (row.checked_at and row.checked_at >= asked):
            context["waiting"] = ""  # answered: the panel stops asking
        elif timezone.now() - asked > CHECK_WAIT:
            context["waiting"] = ""
            context["unanswered"] = row.player.name
    context["since"] = since
    return render(request, "duels/duels/_player_checks.html", context)


CHECK_WAIT = dt.timedelta(minutes=3)  # past this a check nobody ran is reported, not awaited


def _parsed_time(text: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


@require_POST
@login_required
def player_check_start(request: HttpRequest, player_uuid: UUID) -> HttpResponse:
    """Check a player now (in the background); the checks panel shows the answer."""
    if not duel_can_start(user=request.user):
        raise PermissionDenied(DUEL_START_DENIED)
    from duels.services.player_checks import player_check_request  # the players' SDK layer

    player = get_object_or_404(Player, uuid=player_uuid)
    if not player.builtin:
        player_check_request(player=player)
    chosen = _chosen_players(request.POST)
    if request.htmx:
        since = timezone.now().isoformat()
        context = _checks_context(chosen, waiting=f"{player.uuid}")
        context["since"] = since
        return render(request, "duels/duels/_player_checks.html", context)
    query = urlencode({side: str(p.uuid) for side, p in chosen.items()})
    return redirect(reverse("duels:duel_new") + (f"?{query}" if query else ""))


@require_http_methods(["GET", "POST"])
@login_required
def duel_cancel_view(request: HttpRequest, duel_uuid: UUID) -> HttpResponse:
    """Cancel a duel after asking: a GET (or a POST without `confirm`) shows what cancelling
    does and asks; a POST with `confirm=yes` cancels."""
    from duels.engine.duels import duel_cancel

    duel = duel_get(duel_uuid=duel_uuid)
    if not duel_can_cancel(duel=duel, user=request.user):
        raise PermissionDenied(DUEL_CANCEL_DENIED)
    if not duel.is_done and not cancel_confirmed(request):
        return render(request, "duels/confirm_cancel.html", {
            "kind": "duel", "name": f"{duel.a.name} vs {duel.b.name}",
            "status": duel.get_status_display(),
            "consequence": "Cancelling stops it for good: runs still to come never run, and the "
                           "duel gets no result and counts in no rating.",
            "action_url": reverse("duels:duel_cancel", args=[duel.uuid]),
            "back_url": reverse("duels:duel_detail", args=[duel.uuid]),
        })
    if duel.is_done:
        messages.info(request, f"Duel already {duel.status}.")
    else:
        duel_cancel(duel=duel)
        messages.success(request, "Duel cancelled.")
    return redirect("duels:duel_detail", duel_uuid=duel.uuid)


urlpatterns = [
    path("duels/", duel_list_page, name="duel_list"),
    path("duels/new/", duel_new, name="duel_new"),
    path("duels/new/checks/", duel_player_checks, name="duel_player_checks"),
    path("players/<uuid:player_uuid>/check/", player_check_start, name="player_check"),
    path("duels/<uuid:duel_uuid>/", duel_detail, name="duel_detail"),
    path("duels/<uuid:duel_uuid>/cancel/", duel_cancel_view, name="duel_cancel"),
]
