"""Notes on environments, episodes and steps (htmx panels), and the review queue at /annotate/.

Each panel is one partial, `templates/duels/annotations/_panel.html`, swapped as a whole: GET
lists the notes, POST writes one and returns the updated panel. Without JavaScript the same URLs
serve a full page and redirect after a write. Export downloads and the staff import form live in
duels/views/exchange.py; their routes are part of this module's `urlpatterns`.
"""

from __future__ import annotations

from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods, require_POST

from duels.forms.annotations import AnnotationForm
from duels.models import STARTER_TAGS, Annotation, Environment, Episode
from duels.selectors.annotations import (
    annotated_line_ranges,
    annotation_get,
    annotation_tags_in_use,
    annotations_for_environment,
    annotations_for_episode,
    review_queue,
    review_queue_next,
)
from duels.selectors.designs import design_authors
from duels.selectors.environment_card import environment_card
from duels.selectors.environments import environment_outcomes
from duels.selectors.episodes import episode_step
from duels.selectors.source_view import environment_source_lines
from duels.services.annotations import (
    AnnotationError,
    annotation_can_delete,
    annotation_can_edit,
    annotation_create,
    annotation_delete,
    annotation_update,
)
from duels.views import exchange
from duels.views.errors import param_int, param_uuid


class _Target:
    """What a panel is about: an environment, an episode, or one step of an episode."""

    def __init__(
        self, *, environment: Environment | None = None, episode: Episode | None = None,
        step_index: int | None = None,
    ) -> None:
        self.environment = environment
        self.episode = episode
        self.step_index = step_index

    @classmethod
    def of(cls, annotation: Annotation) -> _Target:
        return cls(environment=annotation.environment, episode=annotation.episode,
                   step_index=annotation.step_index)

    @property
    def url(self) -> str:
        if self.environment is not None:
            return reverse("duels:environment_annotations", args=[self.environment.uuid])
        url = reverse("duels:episode_annotations", args=[self.episode.uuid])
        return url if self.step_index is None else f"{url}?step={self.step_index}"

    @property
    def panel_id(self) -> str:
        return "annotations" if self.step_index is None else "step-annotations"

    def notes(self) -> QuerySet[Annotation]:
        if self.environment is not None:
            return annotations_for_environment(environment=self.environment)
        return annotations_for_episode(episode=self.episode, step_index=self.step_index)


def annotation_panel_context(
    *, user, target: _Target, form: AnnotationForm | None = None,
    editing: Annotation | None = None, saved: str = "",
) -> dict:
    """Everything `_panel.html` needs (the environment page may build it with this too)."""
    notes = list(target.notes())
    for note in notes:
        note.can_edit = annotation_can_edit(annotation=note, user=user)
        note.can_delete = annotation_can_delete(annotation=note, user=user)
    with_lines = target.environment is not None
    return {
        "environment": target.environment,
        "episode": target.episode,
        "step_index": target.step_index,
        "annotations": notes,
        "annotation_form": form or AnnotationForm(with_lines=with_lines),
        "editing": editing,
        "panel_url": target.url,
        "panel_id": target.panel_id,
        "form_url": (
            reverse("duels:annotation_edit", args=[editing.uuid]) if editing else target.url
        ),
        "tags_in_use": annotation_tags_in_use(),
        "saved": saved,
    }


def _render_panel(
    request: HttpRequest, target: _Target, *, status: int = 200, changed: bool = False,
    **extra,
) -> HttpResponse:
    context = annotation_panel_context(user=request.user, target=target, **extra)
    if request.htmx:
        if changed and target.environment is not None:
            # The source beside the panel shows notes in its gutter: it is sent along (an
            # out-of-band swap), so a new line note appears beside its lines without a reload.
            context["source_oob"] = True
            context["source_lines"] = environment_source_lines(environment=target.environment)
        return render(request, "duels/annotations/_panel.html", context, status=status)
    if target.environment is not None:
        context["ranges"] = annotated_line_ranges(environment=target.environment)
        context["source_lines"] = environment_source_lines(environment=target.environment)
    elif target.step_index is not None:
        context["step"] = episode_step(episode=target.episode, index=target.step_index)
    return render(request, "duels/annotations/page.html", context, status=status)


def _write(request: HttpRequest, target: _Target, *, annotation: Annotation | None = None):
    form = AnnotationForm(request.POST, with_lines=target.environment is not None)
    if form.is_valid():
        try:
            if annotation is None:
                annotation_create(
                    author=request.user, data=form.to_input(), environment=target.environment,
                    episode=target.episode, step_index=target.step_index,
                )
            else:
                annotation_update(annotation=annotation, user=request.user, data=form.to_input())
        except AnnotationError as exc:
            form.add_error(None, str(exc))
    if form.errors:
        # htmx swaps only 2xx answers; without JavaScript a 400 page shows the same errors.
        status = 200 if request.htmx else 400
        return _render_panel(request, target, status=status, form=form, editing=annotation)
    saved = "Saved your changes." if annotation is not None else "Saved your note."
    if request.htmx:
        return _render_panel(request, target, saved=saved, changed=True)
    messages.success(request, saved)
    return redirect(target.url)


@login_required
@require_http_methods(["GET", "POST"])
def environment_annotations(request: HttpRequest, environment_uuid: UUID) -> HttpResponse:
    target = _Target(environment=get_object_or_404(Environment, uuid=environment_uuid))
    if request.method == "POST":
        return _write(request, target)
    return _render_panel(request, target)


def _step_index(request: HttpRequest, *, episode: Episode) -> int | None:
    """`?step=N`: a step the episode has (0 is the reset), or BadRequest saying which it has."""
    raw = request.GET.get("step", request.POST.get("step", ""))
    if raw == "":
        return None
    return param_int(raw, name="step", maximum=episode.steps)


@login_required
@require_http_methods(["GET", "POST"])
def episode_annotations(request: HttpRequest, episode_uuid: UUID) -> HttpResponse:
    episode = get_object_or_404(Episode.objects.select_related("environment"), uuid=episode_uuid)
    target = _Target(episode=episode, step_index=_step_index(request, episode=episode))
    if request.method == "POST":
        return _write(request, target)
    return _render_panel(request, target)


def _annotation_or_404(annotation_uuid: UUID) -> Annotation:
    try:
        return annotation_get(annotation_uuid=annotation_uuid)
    except Annotation.DoesNotExist:
        raise Http404("No such note.") from None


@login_required
@require_http_methods(["GET", "POST"])
def annotation_edit(request: HttpRequest, annotation_uuid: UUID) -> HttpResponse:
    annotation = _annotation_or_404(annotation_uuid)
    if not annotation_can_edit(annotation=annotation, user=request.user):
        raise PermissionDenied("Only the author of a note can edit it.")
    target = _Target.of(annotation)
    if request.method == "POST":
        return _write(request, target, annotation=annotation)
    form = AnnotationForm.for_annotation(annotation)
    return _render_panel(request, target, form=form, editing=annotation)


@login_required
@require_POST
def annotation_delete_view(request: HttpRequest, annotation_uuid: UUID) -> HttpResponse:
    annotation = _annotation_or_404(annotation_uuid)
    target = _Target.of(annotation)
    try:
        annotation_delete(annotation=annotation, user=request.user)
    except AnnotationError as exc:
        raise PermissionDenied(str(exc)) from None
    if request.htmx:
        return _render_panel(request, target, changed=True)
    return redirect(target.url)


# --- review queue ------------------------------------------------------------------------------

QUEUE_FILTERS = ("family", "author", "tag")


def _queue_filters(data) -> dict[str, str]:
    return {name: (data.get(name) or "").strip()[:100] for name in QUEUE_FILTERS}


def _queue_url(filters: dict[str, str], *, after: Environment | None = None) -> str:
    params = {key: value for key, value in filters.items() if value}
    if after is not None:
        params["after"] = str(after.uuid)
    query = urlencode(params)
    return reverse("duels:review_queue") + (f"?{query}" if query else "")


@login_required
@require_http_methods(["GET", "POST"])
def review_queue_page(request: HttpRequest) -> HttpResponse:
    """One environment at a time, oldest first; save a note or skip to the next."""
    data = request.POST if request.method == "POST" else request.GET
    filters = _queue_filters(data)
    queue = review_queue(**filters)
    form = AnnotationForm()
    environment = None
    if request.method == "POST":
        environment = get_object_or_404(
            Environment, uuid=param_uuid(request.POST.get("environment", ""), name="environment")
        )
        form = AnnotationForm(request.POST)
        if form.is_valid():
            try:
                annotation_create(
                    author=request.user, data=form.to_input(), environment=environment
                )
            except AnnotationError as exc:
                form.add_error(None, str(exc))
        if not form.errors:
            messages.success(
                request, f"Saved your note on {environment.title}. Here is the next environment."
            )
            return redirect(_queue_url(filters, after=environment))
    else:
        after = None
        try:
            after_uuid = UUID(request.GET.get("after", ""))
            after = Environment.objects.filter(uuid=after_uuid).first()
        except ValueError:
            pass
        environment = review_queue_next(queue=queue, after=after)
    context = {
        "environment": environment,
        "filters": filters,
        "form": form,
        "remaining": queue.count(),
        "starter_tags": STARTER_TAGS,
        "tags_in_use": annotation_tags_in_use(),
        "queue_url": _queue_url(filters),
    }
    if environment is not None:
        context["ranges"] = annotated_line_ranges(environment=environment)
        context["source_lines"] = environment_source_lines(environment=environment)
        context["card"] = environment_card(outcomes=environment_outcomes(environment=environment))
        context["hints"] = environment.hints.all()
        context["next_url"] = _queue_url(filters, after=environment)
        context["notes"] = annotations_for_environment(environment=environment)
        context["design_authors"] = design_authors(
            content_hashes=[environment.content_hash]).get(environment.content_hash, [])
    return render(request, "duels/review/queue.html", context, status=400 if form.errors else 200)


urlpatterns = [
    path(
        "environments/<uuid:environment_uuid>/annotations/",
        environment_annotations,
        name="environment_annotations",
    ),
    path("episodes/<uuid:episode_uuid>/annotations/", episode_annotations,
         name="episode_annotations"),
    path("annotations/<uuid:annotation_uuid>/edit/", annotation_edit, name="annotation_edit"),
    path("annotations/<uuid:annotation_uuid>/delete/", annotation_delete_view,
         name="annotation_delete"),
    path("annotate/", review_queue_page, name="review_queue"),
    *exchange.urlpatterns,
]
