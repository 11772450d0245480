"""Annotation queues: rubrics (staff), queues (staff), the work page (annotators) and the
results page (progress, agreement, adjudication, pairwise ranking)."""

from __future__ import annotations

from urllib.parse import urlencode
from uuid import UUID

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from duels.exchange.queue_answers_csv import queue_answers_csv_lines
from duels.forms.queues import (
    SOURCE_LABELS,
    QueueForm,
    RubricForm,
    answer_values_from_post,
    rubric_questions_parse,
    rubric_questions_text,
)
from duels.models import AnnotationQueue, Answer, ItemKind, QuestionKind, Rubric
from duels.selectors.agreement import queue_agreement, queue_ranking
from duels.selectors.annotations import annotated_line_ranges
from duels.selectors.environment_card import environment_card
from duels.selectors.environments import environment_outcomes
from duels.selectors.episodes import episode_step, episode_steps_window
from duels.selectors.labels import label_verdicts
from duels.selectors.queue_items import queue_item_views
from duels.selectors.queues import (
    design_representatives,
    queue_answer_of,
    queue_items,
    queue_list,
    queue_next_index,
    queue_previous_index,
    queue_progress,
    queue_progress_many,
    rubric_versions,
)
from duels.selectors.source_view import environment_source_lines
from duels.services.annotation_access import (
    QUEUE_DENIED,
    STAFF_ONLY,
    answer_can_edit,
    queue_can_annotate,
    queue_can_manage,
    queue_can_view,
    rubric_can_edit,
)
from duels.services.answers import AnswerError, adjudication_save, answer_save
from duels.services.queue_results import AGREEMENT, RANKING, queue_results
from duels.services.queues import QueueError, queue_create, queue_set_annotators
from duels.services.rubrics import RubricError, rubric_create, rubric_revise
from duels.views.common import streaming_download
from duels.views.errors import param_int


def _queue_or_404(queue_uuid: UUID) -> AnnotationQueue:
    return get_object_or_404(AnnotationQueue.objects.select_related("rubric"), uuid=queue_uuid)


@require_GET
@login_required
def queue_list_page(request: HttpRequest) -> HttpResponse:
    queues = list(queue_list(user=request.user))
    progress = queue_progress_many(queues=queues)
    for queue in queues:
        queue.progress = progress[queue.pk]
    return render(request, "duels/queues/list.html", {
        "queues": queues, "can_manage": queue_can_manage(user=request.user),
        "rubrics": rubric_versions() if rubric_can_edit(user=request.user) else []})


@require_http_methods(["GET", "POST"])
@login_required
def rubric_edit_page(request: HttpRequest, rubric_uuid: UUID | None = None) -> HttpResponse:
    """A new rubric, or (with a uuid) the next version of an existing one."""
    if not rubric_can_edit(user=request.user):
        raise PermissionDenied(STAFF_ONLY)
    base = get_object_or_404(Rubric, uuid=rubric_uuid) if rubric_uuid else None
    initial = ({"name": base.name, "description": base.description,
                "questions": rubric_questions_text(base)} if base else {})
    form = RubricForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            questions = rubric_questions_parse(data["questions"])  # every problem at once
            if base is None:
                rubric = rubric_create(user=request.user, name=data["name"],
                                       description=data["description"], questions=questions)
            else:
                rubric = rubric_revise(user=request.user, rubric=base, name=data["name"],
                                       description=data["description"], questions=questions)
        except RubricError as exc:
            for message in exc.messages:
                form.add_error("questions", message)
        else:
            messages.success(request, f"Saved {rubric.name} version {rubric.version}.")
            return redirect("duels:queue_list")
    return render(request, "duels/queues/rubric_form.html", {"form": form, "base": base},
                  status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@login_required
def queue_new_page(request: HttpRequest) -> HttpResponse:
    if not queue_can_manage(user=request.user):
        raise PermissionDenied(STAFF_ONLY)
    # A study's or a panel's page links here with its source chosen (?source=panel&panel=…).
    initial = {key: request.GET[key] for key in ("source", "tournament", "study", "panel")
               if request.GET.get(key)}
    form = QueueForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            queue = queue_create(
                user=request.user, name=data["name"], rubric=data["rubric"],
                selection=form.selection(), annotators=list(data["annotators"]),
                overlap=data["overlap"], kind=data["kind"],
                pair_question=data.get("pair_question") or "",
                guidelines=data.get("guidelines") or "")
        except forms.ValidationError as exc:
            form.add_error(None, exc)  # each message on the field it names
        except QueueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Queue {queue.name} holds {len(queue_items(queue))} "
                                      "items.")
            return redirect("duels:queue_results", queue.uuid)
    return render(request, "duels/queues/new.html", {"form": form},
                  status=400 if form.errors else 200)


def _side(environment, design: str) -> dict:
    """What the work page shows of one design: figures, hints and source with its notes; only
    its hash when no copy is stored here (a queue imported without its environments)."""
    if environment is None:
        return {"missing": design}
    return {"environment": environment, "hints": list(environment.hints.all()),
            "card": environment_card(outcomes=environment_outcomes(environment=environment)),
            "source_lines": environment_source_lines(environment=environment),
            "ranges": annotated_line_ranges(environment=environment)}


ITEM_STEPS = 40  # an episode item shows its first steps; the replay has the rest


def _item_side(queue: AnnotationQueue, view) -> dict:
    """What the work page shows of one item: a design (as `_side`), an episode's first steps,
    or one step with the observation before it."""
    if view is not None and view.object is None and queue.item_kind == ItemKind.DESIGN:
        return {**_side(None, view.key), "kind": ItemKind.DESIGN}  # its hash, and why
    if view is None or view.object is None:
        return {"missing": view.label if view else "", "kind": queue.item_kind}
    if queue.item_kind == ItemKind.DESIGN:
        return {**_side(view.object, view.key), "kind": ItemKind.DESIGN}
    if queue.item_kind == ItemKind.EPISODE:
        episode = view.object
        return {"kind": ItemKind.EPISODE, "view": view, "episode": episode,
                "hint": episode.hint.text if episode.hint_id else "",
                "steps": episode_steps_window(episode=episode, start=0, size=ITEM_STEPS),
                "more": episode.steps + 1 > ITEM_STEPS}
    step = view.object
    previous = episode_step(episode=step.episode, index=step.index - 1) if step.index else None
    return {"kind": ItemKind.STEP, "view": view, "step": step, "episode": step.episode,
            "previous": previous}


def _work_url(queue: AnnotationQueue, **params) -> str:
    query = urlencode({key: value for key, value in params.items() if value is not None})
    return reverse("duels:queue_work", args=[queue.uuid]) + (f"?{query}" if query else "")


@require_http_methods(["GET", "POST"])
@login_required
def queue_work_page(request: HttpRequest, queue_uuid: UUID) -> HttpResponse:
    """One item at a time: the next one this annotator has not answered that still needs
    answers; `?item=N` opens a given item (back), `?after=N` skips past it."""
    queue = _queue_or_404(queue_uuid)
    if not queue_can_annotate(queue=queue, user=request.user):
        raise PermissionDenied(QUEUE_DENIED)
    items = queue_items(queue)
    error = ""
    status = 200
    if request.method == "POST":
        index = param_int(request.POST.get("item", ""), name="item", maximum=len(items) - 1)
        existing = queue_answer_of(queue=queue, user=request.user, index=index)
        if existing is not None and not answer_can_edit(answer=existing, user=request.user):
            raise PermissionDenied("Only the annotator who gave this answer may change it.")
        try:
            answer_save(user=request.user, queue=queue, index=index,
                        values=answer_values_from_post(rubric=queue.rubric, post=request.POST)
                        if not queue.is_pairwise else {"note": request.POST.get("note", "")},
                        choice=request.POST.get("choice", ""))
        except AnswerError as exc:
            error, status = str(exc), 400
        else:
            messages.success(request, f"Saved your answer to item {index + 1}.")
            return redirect(_work_url(queue, after=index))
    elif request.GET.get("item"):
        index = param_int(request.GET["item"], name="item", maximum=len(items) - 1)
    else:
        after = request.GET.get("after")
        after_index = param_int(after, name="after", maximum=len(items) - 1) if after else None
        index = queue_next_index(queue=queue, user=request.user, after=after_index)
    progress = queue_progress(queue=queue)
    context = {"queue": queue, "progress": progress, "error": error,
               "questions": queue.rubric.questions, "index": index,
               "answered_any": any(count for name, count in progress.per_annotator
                                   if name == request.user.get_username())}
    if index is not None:
        design, design_b = items[index]
        views = queue_item_views(queue=queue, keys=[key for key in (design, design_b) if key])
        answer = queue_answer_of(queue=queue, user=request.user, index=index)
        posted = request.POST if request.method == "POST" else None
        context.update({
            "item_number": index + 1, "items": len(items), "answer": answer,
            "values": (answer_values_from_post(rubric=queue.rubric, post=posted) if posted
                       else (answer.values if answer else {})),
            "choice": (posted or {}).get("choice") or (answer.choice if answer else ""),
            "left": _item_side(queue, views.get(design)),
            "right": _item_side(queue, views.get(design_b)) if design_b else None,
            "skip_url": _work_url(queue, after=index),
            "back_index": queue_previous_index(queue=queue, user=request.user, before=index),
            "pair_question": queue.rubric.question(queue.pair_question)
            if queue.is_pairwise else None,
        })
        if context["back_index"] is not None:
            context["back_url"] = _work_url(queue, item=context["back_index"])
    return render(request, "duels/queues/work.html", context, status=status)


@require_GET
@login_required
def queue_results_page(request: HttpRequest, queue_uuid: UUID) -> HttpResponse:
    """Progress per annotator and item, agreement per question, disagreements to adjudicate
    and, for a pairwise queue, the ranking beside the measured figures."""
    queue = _queue_or_404(queue_uuid)
    if not queue_can_view(queue=queue, user=request.user):
        raise PermissionDenied(QUEUE_DENIED)
    source = queue.selection.get("source", "environments")
    context = {"queue": queue, "progress": queue_progress(queue=queue),
               "source_label": SOURCE_LABELS.get(source, source),
               "can_manage": queue_can_manage(user=request.user),
               "can_annotate": queue_can_annotate(queue=queue, user=request.user),
               "annotators": list(queue.annotators.order_by("username"))}
    # Computed once per revision of the answers (duels/services/queue_results.py).
    if queue.is_pairwise:
        figures, current = queue_results(queue=queue, kind=RANKING)
        context["ranking"] = queue_ranking(queue=queue, figures=figures, viewer=request.user)
    else:
        figures, current = queue_results(queue=queue, kind=AGREEMENT)
        context["agreement"] = (queue_agreement(queue=queue, figures=figures,
                                                viewer=request.user) if figures else None)
        verdicts = label_verdicts(queue=queue)
        if not request.user.is_staff:
            # Blind, as the disagreements: the labels others gave a design show once the
            # reader has given theirs (docs/annotating.md).
            mine = set(Answer.objects.filter(queue=queue, annotator=request.user)
                       .values_list("design", flat=True))
            hidden = {v.design for v in verdicts if v.design not in mine}
            verdicts = [v for v in verdicts if v.design in mine]
            context["labels_hidden"] = len(hidden)
        names = design_representatives(content_hashes=[v.design for v in verdicts])
        context["label_verdicts"] = [{"verdict": v, "environment": names.get(v.design)}
                                     for v in verdicts]
    context["figures_current"] = current
    return render(request, "duels/queues/results.html", context)


@require_POST
@login_required
def queue_adjudicate(request: HttpRequest, queue_uuid: UUID) -> HttpResponse:
    queue = _queue_or_404(queue_uuid)
    if not queue_can_manage(user=request.user):
        raise PermissionDenied(STAFF_ONLY)
    key = request.POST.get("question", "")
    question = queue.rubric.question(key) or {}
    value = (request.POST.getlist("value") if question.get("kind") == QuestionKind.MULTI
             else request.POST.get("value", ""))
    try:
        adjudication_save(user=request.user, queue=queue, design=request.POST.get("design", ""),
                          question_key=key, value=value, note=request.POST.get("note", ""))
    except AnswerError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Settled {question.get('prompt', key)}.")
    return redirect(reverse("duels:queue_results", args=[queue.uuid]) + "#disagreements")


@require_POST
@login_required
def queue_annotators(request: HttpRequest, queue_uuid: UUID) -> HttpResponse:
    """Replace the queue's annotators (staff): comma-separated usernames."""
    queue = _queue_or_404(queue_uuid)
    if not queue_can_manage(user=request.user):
        raise PermissionDenied(STAFF_ONLY)
    names = [name.strip() for name in request.POST.get("annotators", "")[:2000].split(",")
             if name.strip()]
    try:
        queue_set_annotators(user=request.user, queue=queue, usernames=names)
    except QueueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{queue.name} now has {len(names)} annotator"
                                  f"{'' if len(names) == 1 else 's'}.")
    return redirect("duels:queue_results", queue.uuid)


@require_GET
@login_required
def queue_answers_csv(request: HttpRequest, queue_uuid: UUID) -> HttpResponse:
    """Every answer of the queue as CSV (whoever may see the queue's results)."""
    queue = _queue_or_404(queue_uuid)
    if not queue_can_view(queue=queue, user=request.user):
        raise PermissionDenied(QUEUE_DENIED)
    return streaming_download(request, queue_answers_csv_lines(queue=queue),
                              content_type="text/csv; charset=utf-8",
                              filename=f"queue-{queue.uuid}-answers.csv")


urlpatterns = [
    path("annotate/queues/", queue_list_page, name="queue_list"),
    path("annotate/queues/<uuid:queue_uuid>/answers.csv", queue_answers_csv,
         name="queue_answers_csv"),
    path("annotate/queues/new/", queue_new_page, name="queue_new"),
    path("annotate/queues/<uuid:queue_uuid>/", queue_work_page, name="queue_work"),
    path("annotate/queues/<uuid:queue_uuid>/results/", queue_results_page,
         name="queue_results"),
    path("annotate/queues/<uuid:queue_uuid>/adjudicate/", queue_adjudicate,
         name="queue_adjudicate"),
    path("annotate/queues/<uuid:queue_uuid>/annotators/", queue_annotators,
         name="queue_annotators"),
    path("annotate/rubrics/new/", rubric_edit_page, name="rubric_new"),
    path("annotate/rubrics/<uuid:rubric_uuid>/edit/", rubric_edit_page, name="rubric_edit"),
]
