"""Panel pages: the list with each panel's manifest hash; one panel's versions, its ranking
(every player that played it, imported or evaluated here), its per-version results, its
evaluations and the form that starts one (operators); two evaluations side by side; the
ranking's tables as CSV or JSON."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from duels.engine.validation import environment_invalid_reason
from duels.forms.evaluations import EvaluationForm
from duels.models import Evaluation
from duels.panels.errors import PanelError
from duels.panels.figures_cache import panel_figures_stored
from duels.panels.selectors import (
    PANEL_VERSIONS_PAGE,
    panel_entries_listed,
    panel_evaluations,
    panel_get,
    panel_list,
    panel_outcome_summary,
)
from duels.panels.tables import TABLES, panel_table, results_by_version
from duels.services.access import (
    EVALUATION_CANCEL_DENIED,
    EVALUATION_START_DENIED,
    evaluation_can_cancel,
    evaluation_can_start,
)
from duels.studies.answer import answer_context
from duels.studies.tables import table_grid
from duels.views.analytics import table_csv_response
from duels.views.common import cancel_confirmed, paginate
from duels.views.errors import param_int


@require_GET
@login_required
def panel_list_page(request: HttpRequest) -> HttpResponse:
    return render(request, "duels/panels/list.html", {"page": paginate(request, panel_list())})


def _level(request: HttpRequest) -> str:
    """`?level=` as a hint level ("1" or "2"), or BadRequest: it is written into file names,
    headers and JSON, so nothing else passes."""
    return str(param_int(request.GET.get("level", "1"), name="level", minimum=1, maximum=2))


def _ranking(panel, level: str) -> tuple[dict, bool, list[str]]:
    stored, current = panel_figures_stored(panel=panel)
    by_level = (stored or {}).get("levels") or {}
    return by_level.get(level) or {}, current, sorted(by_level)


def _detail_context(request: HttpRequest, panel, form: EvaluationForm | None = None) -> dict:
    level = _level(request)
    figures, current, levels = _ranking(panel, level)
    versions = paginate(request, panel_entries_listed(panel), per_page=PANEL_VERSIONS_PAGE)
    entries = [{"entry": entry, "invalid_reason": "" if entry.environment.is_valid
                else environment_invalid_reason(environment=entry.environment)}
               for entry in versions]
    can_start = evaluation_can_start(user=request.user)
    evaluations = panel_evaluations(panel)
    return {
        "live": not current or any(not row["evaluation"].is_done for row in evaluations),
        "panel": panel, "entries": entries, "versions": versions,
        "outcomes": panel_outcome_summary(panel),
        "evaluations": evaluations, "ranking": figures.get("models") or [],
        "results": results_by_version(figures), "new_solver": figures.get("new_solver"),
        "incomplete": sorted((figures.get("incomplete") or {}).items()),
        "ranking_current": current, "level": level, "levels": levels, "tables": TABLES,
        "can_start": can_start, **answer_context(figures=figures),
        "form": form if form is not None else (EvaluationForm(panel=panel) if can_start
                                               else None),
    }


@require_GET
@login_required
def panel_detail(request: HttpRequest, panel_uuid: UUID) -> HttpResponse:
    panel = panel_get(panel_uuid)
    if request.htmx and request.htmx.target == "panel-live":
        return render(request, "duels/panels/detail.html#panel-live",
                      _detail_context(request, panel))
    return render(request, "duels/panels/detail.html", _detail_context(request, panel))


@require_POST
@login_required
def panel_evaluate(request: HttpRequest, panel_uuid: UUID) -> HttpResponse:
    """The evaluation form: a valid POST creates (or goes on with) the evaluation and hands it
    to the workers."""
    from duels.panels.evaluation import evaluation_enqueue, evaluation_start

    if not evaluation_can_start(user=request.user):
        raise PermissionDenied(EVALUATION_START_DENIED)
    panel = panel_get(panel_uuid)
    form = EvaluationForm(request.POST, panel=panel)
    if not form.is_valid():
        return _form_refused(request, panel, form)
    try:
        evaluation = evaluation_start(plan=form.evaluation_plan(), created_by=request.user)
    except PanelError as error:
        # Another operator's evaluation, or a second click on a running one: said in place.
        form.add_error(None, str(error))
        return _form_refused(request, panel, form)
    evaluation_enqueue(evaluation=evaluation)
    note = (f"{evaluation.player.name} queued on panel {panel.name}: "
            f"{len(form.evaluation_plan().cases)} plays.")
    if request.htmx:
        # The new row shows at once: the page's live list refreshes on this event.
        response = render(request, "duels/panels/_evaluation_form.html#evaluation-form", {
            **_detail_context(request, panel, form=EvaluationForm(panel=panel)),
            "started": note})
        response["HX-Trigger"] = "evaluation-started"
        return response
    messages.success(request, note)
    return redirect(reverse("duels:panel_detail", kwargs={"panel_uuid": panel.uuid})
                    + "#evaluations")


def _form_refused(request: HttpRequest, panel, form: EvaluationForm) -> HttpResponse:
    template = ("duels/panels/_evaluation_form.html#evaluation-form" if request.htmx
                else "duels/panels/detail.html")
    return render(request, template, _detail_context(request, panel, form=form), status=400)


@require_http_methods(["GET", "POST"])
@login_required
def evaluation_cancel_view(request: HttpRequest, evaluation_uuid: UUID) -> HttpResponse:
    """Cancel an evaluation after asking (only `confirm=yes` cancels)."""
    from duels.panels.evaluation import evaluation_cancel

    evaluation = get_object_or_404(Evaluation.objects.select_related("panel", "player"),
                                   uuid=evaluation_uuid)
    if not evaluation_can_cancel(evaluation=evaluation, user=request.user):
        raise PermissionDenied(EVALUATION_CANCEL_DENIED)
    back = reverse("duels:panel_detail", args=[evaluation.panel.uuid]) + "#evaluations"
    if not evaluation.is_done and not cancel_confirmed(request):
        return render(request, "duels/confirm_cancel.html", {
            "kind": "evaluation", "name": str(evaluation),
            "status": evaluation.get_status_display(),
            "consequence": "Running plays stop after their step; what was played keeps "
                           "counting, and evaluating the player again plays the rest.",
            "action_url": reverse("duels:evaluation_cancel", args=[evaluation.uuid]),
            "back_url": back,
        })
    if evaluation.is_done:
        messages.info(request, f"Evaluation already {evaluation.status}.")
    else:
        evaluation_cancel(evaluation=evaluation,
                          reason="cancelled by " + request.user.get_username())
        messages.success(request, "Evaluation cancelled: running plays stop after their step.")
    return redirect(back)


@require_GET
@login_required
def panel_table_download(request: HttpRequest, panel_uuid: UUID, table: str,
                         extension: str) -> HttpResponse:
    """One table of the panel's ranking (`models`, `environments`, `results`) as CSV or JSON."""
    panel = panel_get(panel_uuid)
    if table not in TABLES or extension not in ("csv", "json"):
        raise Http404(f"No table {table!r}: the panel's tables are {', '.join(TABLES)}.")
    level = _level(request)
    figures, current, _ = _ranking(panel, level)
    rows = panel_table(figures=figures, name=table)
    name = f"panel-{panel.uuid}-{table}" + ("" if level == "1" else f"-level-{level}")
    if extension == "json":
        response = JsonResponse({"panel": str(panel.uuid), "manifest_sha256":
                                 panel.manifest_sha256, "table": table, "hint_level": level,
                                 "current": current, "rows": rows})
        response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response
    return table_csv_response(table=table_grid(rows), name=name)


@require_GET
@login_required
def panel_compare(request: HttpRequest, panel_uuid: UUID) -> HttpResponse:
    """Evaluations of the panel side by side (`?e=<uuid>&e=…`, or `?before=&after=`): per
    version and seed who passed in which condition, filtered by `show` (`only=<uuid>` for
    "only this one solved"); with two, their pass rates and changes, and the transfer figure
    only when `checkpoints=1` says they are one player before and after training. JSON with
    `format=json`."""
    from duels.panels.compare import evaluations_compare
    from duels.panels.compare_grid import FILTERS, MAX_COMPARED, evaluations_grid, grid_json

    panel = panel_get(panel_uuid)
    evaluations = [row["evaluation"] for row in panel_evaluations(panel)]
    by_uuid = {str(evaluation.uuid): evaluation for evaluation in evaluations}
    asked = request.GET.getlist("e") or [request.GET[key] for key in ("before", "after")
                                         if request.GET.get(key)]
    chosen = [by_uuid.get(value) for value in asked[:MAX_COMPARED + 1]]
    show = request.GET.get("show", "all")
    checkpoints = request.GET.get("checkpoints") == "1"
    grid, pair, problem = None, None, ""
    if None in chosen:
        problem = "Choose evaluations of this panel (one of the chosen is not)."
    elif len(set(chosen)) != len(chosen):
        problem = "Choose two different evaluations: one is chosen twice."
    elif chosen:
        try:
            grid = evaluations_grid(evaluations=chosen, show=show,
                                    only=by_uuid.get(request.GET.get("only", "")))
            if len(chosen) == 2:
                pair = evaluations_compare(before=chosen[0], after=chosen[1])
                if not checkpoints:
                    pair["transfer"] = None  # defined for one player before and after only
        except PanelError as error:
            problem = str(error)
    if request.GET.get("format") == "json":
        if grid is None:
            return JsonResponse({"error": problem or "choose evaluations with ?e="},
                                status=400)
        return JsonResponse({**(pair or {}), **grid_json(grid), "panel": str(panel.uuid),
                             "checkpoints": checkpoints})
    return render(request, "duels/panels/compare.html", {
        "panel": panel, "evaluations": evaluations, "chosen": chosen, "grid": grid,
        "comparison": pair, "checkpoints": checkpoints, "filters": FILTERS, "show": show,
        "problem": problem}, status=400 if problem else 200)


urlpatterns = [
    path("panels/", panel_list_page, name="panel_list"),
    path("panels/<uuid:panel_uuid>/", panel_detail, name="panel_detail"),
    path("panels/<uuid:panel_uuid>/evaluate/", panel_evaluate, name="panel_evaluate"),
    path("panels/<uuid:panel_uuid>/compare/", panel_compare, name="panel_compare"),
    path("panels/<uuid:panel_uuid>/tables/<slug:table>.<str:extension>",
         panel_table_download, name="panel_table"),
    path("evaluations/<uuid:evaluation_uuid>/cancel/", evaluation_cancel_view,
         name="evaluation_cancel"),
]
