"""Study pages: list, the study form (operators), the study page with live progress, cancel,
and every table of the study as CSV or JSON."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from duels.forms.studies import StudyForm
from duels.services.access import (
    STUDY_CANCEL_DENIED,
    STUDY_START_DENIED,
    study_can_cancel,
    study_can_publish,
    study_can_start,
)
from duels.studies.answer import answer_context
from duels.studies.figures_cache import study_figures_state, study_figures_stored
from duels.studies.selectors import (
    study_get,
    study_list,
    study_page,
    study_player_uuids,
    study_setter_play_counts,
)
from duels.studies.story import slot_get, slot_story
from duels.studies.tables import TABLES, study_table, table_grid
from duels.views.analytics import table_csv_response
from duels.views.common import cancel_confirmed, paginate


@require_GET
@login_required
def study_list_page(request: HttpRequest) -> HttpResponse:
    context = {"page": paginate(request, study_list()),
               "can_start": study_can_start(user=request.user)}
    return render(request, "duels/studies/list.html", context)


@require_GET
@login_required
def study_detail(request: HttpRequest, study_uuid: UUID) -> HttpResponse:
    study = study_get(study_uuid=study_uuid)
    can_cancel = study_can_cancel(study=study, user=request.user)
    if request.htmx and request.htmx.target == "study-progress":
        # The live poll needs the progress figures and the figures' state, never the figures:
        # once newer figures are stored, the page reloads to show them.
        figures_at, current = study_figures_state(study=study)
        if figures_at and figures_at != request.GET.get("figures", ""):
            response = HttpResponse(status=204)
            response["HX-Refresh"] = "true"
            return response
        return render(request, "duels/studies/detail.html#study-progress", {
            "study": study, "can_cancel": can_cancel, "figures_at": figures_at,
            "figures_current": current})
    page = study_page(study=study)
    context = {
        "study": study, **page, "figures_at": page["computed_at"],
        **answer_context(figures=page["figures"], study_uuid=str(study.uuid),
                         players=study_player_uuids(study=study),
                         setter_counts=study_setter_play_counts(study=study)),
        "players": list(study.players.order_by("name")),
        "can_cancel": can_cancel,
        "can_publish": study_can_publish(study=study, user=request.user),
        "tables": {name: label for name, (label, _) in TABLES.items()},
    }
    return render(request, "duels/studies/detail.html", context)


@require_GET
@login_required
def study_slot_story(request: HttpRequest, study_uuid: UUID, slot: str) -> HttpResponse:
    """A slot's story: each version's prompt, answer, validation, field play and the
    difference from the one before (`slot` as the lineage table names it: author/env_003)."""
    study = study_get(study_uuid=study_uuid)
    story = slot_story(study=study, slot=slot_get(study=study, lineage=slot))
    return render(request, "duels/studies/story.html", {"study": study, "story": story})


@require_http_methods(["GET", "POST"])
@login_required
def study_new(request: HttpRequest) -> HttpResponse:
    """The study form; a valid POST creates the study, hands it to the workers and opens its
    page. "Estimate cost" posts the same form and shows the bill without starting anything."""
    if not study_can_start(user=request.user):
        raise PermissionDenied(STUDY_START_DENIED)
    form = StudyForm(request.POST or None)
    status, estimate, plan = 200, None, None
    if request.method == "POST":
        if not form.is_valid():
            status = 400
        elif "estimate" in request.POST:
            from duels.studies.creation import study_plan_projection

            plan = form.study_plan()
            estimate = study_plan_projection(plan=plan)
        else:
            from duels.studies.creation import study_create, study_enqueue

            study = study_create(plan=form.study_plan(), created_by=request.user)
            study_enqueue(study=study)
            messages.success(request, f"Study {study.name} queued.")
            url = reverse("duels:study_detail", kwargs={"study_uuid": study.uuid})
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    template = "duels/studies/new.html"
    if request.htmx:
        template += "#study-form"
    return render(request, template, {"form": form, "estimate": estimate, "plan": plan},
                  status=status)


@require_http_methods(["GET", "POST"])
@login_required
def study_cancel_view(request: HttpRequest, study_uuid: UUID) -> HttpResponse:
    """Cancel a study after asking (only `confirm=yes` cancels)."""
    from duels.studies.creation import study_cancel

    study = study_get(study_uuid=study_uuid)
    if not study_can_cancel(study=study, user=request.user):
        raise PermissionDenied(STUDY_CANCEL_DENIED)
    if not study.is_done and not cancel_confirmed(request):
        return render(request, "duels/confirm_cancel.html", {
            "kind": "study", "name": study.name, "status": study.get_status_display(),
            "consequence": "Cancelling stops it for good: running field plays stop after their "
                           "step, versions still to write are never written; what was played "
                           "keeps counting.",
            "action_url": reverse("duels:study_cancel", args=[study.uuid]),
            "back_url": reverse("duels:study_detail", args=[study.uuid]),
        })
    if study.is_done:
        messages.info(request, f"Study already {study.status}.")
    else:
        study_cancel(study=study, reason="cancelled by " + request.user.get_username())
        messages.success(request, "Study cancelled: running field plays stop after their step.")
    return redirect("duels:study_detail", study_uuid=study.uuid)


@require_GET
@login_required
def study_table_download(request: HttpRequest, study_uuid: UUID, table: str,
                         extension: str) -> HttpResponse:
    """One table of the study (`models`, `matrix`, …) as CSV or JSON, from its stored figures."""
    study = study_get(study_uuid=study_uuid)
    if table not in TABLES or extension not in ("csv", "json"):
        raise Http404(f"No table {table!r}: the study's tables are {', '.join(TABLES)}.")
    figures, current = study_figures_stored(study=study)
    rows = study_table(study=study, figures=figures or {}, name=table)
    name = f"study-{study.uuid}-{table}"
    if extension == "json":
        response = JsonResponse({"study": str(study.uuid), "table": table,
                                 "computed_at": (figures or {}).get("computed_at"),
                                 "current": current, "rows": rows})
        response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response
    return table_csv_response(table=table_grid(rows), name=name)


urlpatterns = [
    path("studies/", study_list_page, name="study_list"),
    path("studies/new/", study_new, name="study_new"),
    path("studies/<uuid:study_uuid>/", study_detail, name="study_detail"),
    path("studies/<uuid:study_uuid>/cancel/", study_cancel_view, name="study_cancel"),
    path("studies/<uuid:study_uuid>/slots/<path:slot>/", study_slot_story,
         name="study_slot_story"),
    path("studies/<uuid:study_uuid>/tables/<slug:table>.<str:extension>",
         study_table_download, name="study_table"),
]
