"""Reads about environments: filtered lists with pass rates, detail, the episodes played on it."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import (
    Avg,
    Case,
    Count,
    F,
    FloatField,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from duels.models import Condition, Environment, Episode, Status
from duels.selectors.designs import design_list

_SUCCESS_AS_NUMBER = Case(When(success=True, then=1.0), default=0.0, output_field=FloatField())


def _finished_on_design() -> QuerySet[Episode]:
    """Finished episodes on any copy of the outer row's design, except those of a duel that
    failed (infrastructure gave out: no result), grouped so one aggregate comes back."""
    return (
        Episode.objects.filter(environment__content_hash=OuterRef("content_hash"),
                               status=Status.FINISHED)
        .exclude(duel__status=Status.FAILED)
        .order_by().values("environment__content_hash")
    )


def _pooled(aggregate, *, output_field=None, **condition) -> Subquery:
    return Subquery(
        _finished_on_design().filter(**condition).annotate(value=aggregate).values("value"),
        output_field=output_field or FloatField(),
    )


@dataclass(frozen=True)
class EnvironmentFilters:
    """What the environments list may be narrowed by; empty values mean no filter."""

    author: UUID | None = None
    family: str = ""
    tag: str = ""
    status: str = ""
    gain_min: float | None = None
    gain_max: float | None = None
    q: str = ""
    sort: str = ""


# Orderings of the list; the joint model's figures come from the latest analytics refresh and
# environments without one sort last.
ENVIRONMENT_SORTS = {
    "": ("newest first", ()),
    "hardest": ("hardest first (difficulty b)", (F("difficulty").desc(nulls_last=True),)),
    "easiest": ("easiest first (difficulty b)", (F("difficulty").asc(nulls_last=True),)),
    "hint_effect": ("most effective hint first (hint effect γ)",
                    (F("hint_effect").desc(nulls_last=True),)),
    "learnable": ("hard without the hint, solved with it (expected setter score)",
                  (F("field_setter_score").desc(nulls_last=True),)),
    "hint_gain": ("largest hint gain first", (F("hint_gain").desc(nulls_last=True),)),
    "training_value": ("most valuable for training first (training value)",
                       (F("training_value").desc(nulls_last=True),)),
}


def environment_list(*, filters: EnvironmentFilters | None = None) -> QuerySet[Environment]:
    """One row per design (its first copy; newest first unless `filters.sort` says otherwise)
    with unhinted/hinted pass rates pooled over every copy, hint gain, and the joint model's
    difficulty and hint effect annotated."""
    filters = filters or EnvironmentFilters()
    environments = (
        design_list()
        .annotate(
            p_unhinted=_pooled(Avg(_SUCCESS_AS_NUMBER), condition=Condition.UNHINTED),
            p_hinted=_pooled(Avg(_SUCCESS_AS_NUMBER), condition=Condition.HINTED),
            episode_count=Coalesce(_pooled(Count("pk"), output_field=IntegerField()), 0),
        )
        .annotate(hint_gain=F("p_hinted") - F("p_unhinted"),
                  difficulty=F("estimate__difficulty"), hint_effect=F("estimate__hint_effect"),
                  field_setter_score=F("estimate__field_setter_score"),
                  training_value=F("estimate__training_value"))
    )
    if filters.author:
        # A design is by every author who wrote a copy of it.
        environments = environments.filter(content_hash__in=Environment.objects.filter(
            author__uuid=filters.author).values("content_hash"))
    if filters.family:
        environments = environments.filter(family__iexact=filters.family)
    if filters.tag:
        # Tags live on notes (JSON lists); a note on any copy is a note on the design.
        environments = environments.filter(
            content_hash__in=Environment.objects.filter(
                annotations__tags__icontains=f'"{filters.tag}"'
            ).values("content_hash")
        )
    if filters.status:
        environments = environments.filter(status=filters.status)
    if filters.gain_min is not None:
        environments = environments.filter(hint_gain__gte=filters.gain_min)
    if filters.gain_max is not None:
        environments = environments.filter(hint_gain__lte=filters.gain_max)
    if filters.q:
        environments = environments.filter(title__icontains=filters.q)
    _, ordering = ENVIRONMENT_SORTS.get(filters.sort, ENVIRONMENT_SORTS[""])
    return environments.order_by(*ordering, "-created_at", "-pk")


def environment_families() -> list[str]:
    """Distinct non-empty families, for the filter drop-down."""
    families = Environment.objects.exclude(family="").order_by("family")
    return list(families.values_list("family", flat=True).distinct())


def environment_get(*, environment_uuid: UUID) -> Environment:
    """One environment with its author, hints (hint authors included) and model estimate."""
    return get_object_or_404(
        Environment.objects.select_related("author", "estimate").prefetch_related(
            "hints__author"),
        uuid=environment_uuid,
    )


def environment_episodes(*, environment: Environment) -> QuerySet[Episode]:
    """Every episode played on any copy of the environment's design, grouped by solver,
    condition and seed."""
    return (
        Episode.objects.filter(environment__content_hash=environment.content_hash)
        .select_related("solver", "duel", "environment")
        .order_by("solver__name", "condition", "seed", "created_at", "pk")
    )


def environment_outcomes(*, environment: Environment) -> list[dict]:
    """Per solver and condition, pooled over every copy of the design: finished episodes,
    passes and pass rate (one query); a failed duel's episodes are no result and are left out."""
    rows = (
        Episode.objects.filter(environment__content_hash=environment.content_hash,
                               status=Status.FINISHED)
        .exclude(duel__status=Status.FAILED)
        .order_by()
        .values("solver__name", "solver__uuid", "condition")
        .annotate(episodes=Count("pk"), passed=Count("pk", filter=Q(success=True)))
        .order_by("solver__name", "condition")
    )
    return [{**row, "pass_rate": row["passed"] / row["episodes"]} for row in rows]


def design_voided_evidence(*, source: str) -> dict | None:
    """The evidence a stored environment with this source (the same design) was voided after
    play with, or None."""
    from duels.models import content_hash
    from duels.models.environments import voided_after_play

    report = (Environment.objects.filter(voided_after_play(), content_hash=content_hash(source))
              .order_by("pk").values_list("validation", flat=True).first())
    return (report or {}).get("after_play") if report else None


def after_play_lines(evidence: dict) -> str:
    """The evidence of a void as plain text lines (the command line's validation report)."""
    lines = [f"  FAIL after_play: voided after play: {evidence.get('reason', '')}"]
    if evidence.get("actions"):
        lines.append("    actions: " + " -> ".join(map(str, evidence["actions"])))
    if evidence.get("kind") == "hint_leak":
        steps = [str(step) for step in (evidence.get("steps") or [evidence.get("step")])]
        lines += [f"    the hint: {evidence.get('hint', '')}",
                  f"    shown at step{'s' if len(steps) > 1 else ''} {', '.join(steps)}: "
                  f"{evidence.get('observation', '')}"]
    elif evidence.get("left_label"):
        lines += [f"    {evidence['left_label']}: {evidence.get('left', '')!r}",
                  f"    {evidence.get('right_label', '')}: {evidence.get('right', '')!r}"]
    return "\n".join(lines)
