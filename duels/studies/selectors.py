"""Reads about studies for pages, the API and commands: lists, one study with its slots and
versions, and the machine-readable result of `manage.py study --json`."""

from __future__ import annotations

from uuid import UUID

from django.db.models import Count, Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from duels.models import Environment, Episode, Study, StudySlot


def study_list() -> QuerySet[Study]:
    """Every study, newest first, without the (large) stored figures."""
    return Study.objects.defer("figures").annotate(player_count=Count("players", distinct=True))


def study_get(*, study_uuid: UUID | str) -> Study:
    return get_object_or_404(Study.objects.defer("figures"), uuid=study_uuid)


def study_slots(*, study: Study) -> list[StudySlot]:
    """The study's slots in order, each with its versions (`versions`, oldest first)."""
    versions = Environment.objects.filter(study=study).only(
        "pk", "uuid", "title", "slot", "revision", "status", "author_id", "parent_id", "domain",
        "validation", "study_id", "benchmark_seeds", "created_at").order_by("revision", "pk")
    slots = list(StudySlot.objects.filter(study=study).select_related("author")
                 .order_by("position", "pk"))
    by_key: dict[tuple[int, str], list[Environment]] = {}
    for version in versions:
        by_key.setdefault((version.author_id, version.slot), []).append(version)
    for slot in slots:
        slot.versions = by_key.get((slot.author_id, slot.slot), [])
    return slots


def study_result(*, study: Study) -> dict:
    """`manage.py study --json`: {"study", "status", "environments", "episodes"}."""
    study.refresh_from_db(fields=["status"])
    return {
        "study": str(study.uuid),
        "status": study.status,
        "environments": Environment.objects.filter(study=study).count(),
        "episodes": Episode.objects.filter(study=study).count(),
    }


def study_versions_with_players(*, study: Study) -> QuerySet[Environment]:
    return (Environment.objects.filter(study=study).select_related("author", "parent")
            .prefetch_related(Prefetch("hints")).order_by("author__name", "slot", "revision"))
