"""Reads about studies for pages, the API and commands: lists, one study with its slots and
versions and its stored figures, a version's field results, and the machine-readable result of
`manage.py study --json`."""

from __future__ import annotations

from uuid import UUID

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from duels.models import Environment, EnvironmentStatus, Episode, Study, StudySlot
from duels.selectors.training_sets import TrainingItem
from duels.studies.figures_cache import study_figures_stored
from duels.studies.plays_links import matrix_links, pair_links, version_links


def study_list() -> QuerySet[Study]:
    """Every study, newest first, without the (large) stored figures."""
    return (Study.objects.defer("figures")
            .annotate(player_count=Count("players", distinct=True)).order_by("-created_at", "-pk"))


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


def study_player_uuids(*, study: Study) -> dict[str, str]:
    """The study's players' uuids by name (the links from figures to their plays)."""
    return {name: str(uuid) for name, uuid in study.players.values_list("name", "uuid")}


def study_setter_play_counts(*, study: Study) -> dict[str, dict[str, int]]:
    """Per author (uuid): its peers' decided plays of its final versions, unhinted and in all:
    what the episode list shows for `setter=…&final=1&peers=1&outcome=decided` (one query)."""
    from django.db.models import Q

    from duels.models import Condition
    from duels.selectors.episode_list import EpisodeFilters, episode_filters_q

    plays = Episode.objects.filter(episode_filters_q(EpisodeFilters(
        study=study.uuid, final=True, peers=True, outcome="decided")))
    rows = plays.values("environment__author__uuid").annotate(
        unhinted=Count("id", filter=Q(condition=Condition.UNHINTED)), decided=Count("id"))
    return {str(row["environment__author__uuid"]): {"unhinted": row["unhinted"],
                                                    "decided": row["decided"]}
            for row in rows}


def study_exists(*, study_uuid: UUID | str) -> bool:
    return Study.objects.filter(uuid=study_uuid).exists()


def study_result(*, study: Study) -> dict:
    """`manage.py study --json`: {"study", "status", "environments", "episodes"}."""
    study.refresh_from_db(fields=["status"])
    return {
        "study": str(study.uuid),
        "status": study.status,
        "environments": Environment.objects.filter(study=study).count(),
        "episodes": Episode.objects.filter(study=study).count(),
    }


def _matrix_rows(matrix: dict | None) -> list[dict]:
    """The author × solver matrix as template rows: each author with one cell per solver."""
    if not matrix:
        return []
    return [{"author": author,
             "cells": [{"solver": solver, **matrix["cells"][author][solver]}
                       for solver in matrix["solvers"]]}
            for author in matrix["authors"]]


def study_page(*, study: Study) -> dict:
    """Everything the study page shows, from the stored figures and a constant number of
    queries: progress, slots with their lineage, the matrix, the rankings and their tables."""
    figures, current = study_figures_stored(study=study)
    figures = figures or {}
    by_version = {row["uuid"]: row for row in figures.get("environments") or []}
    slots = study_slots(study=study)
    for slot in slots:
        valid = [version for version in slot.versions if version.is_valid]
        slot.final = valid[-1] if valid else None
        for version in slot.versions:
            version.field = by_version.get(str(version.uuid))
            version.is_final = slot.final is not None and version.pk == slot.final.pk
            version.plays = version_links(study_uuid=study.uuid, version_uuid=version.uuid,
                                          row=version.field)
    matrix_rows = _matrix_rows(figures.get("matrix"))
    for row in matrix_rows:  # each author's slots, whose stories its row opens
        row["stories"] = [slot for slot in slots if slot.author.name == row["author"]]
    matrix_links(study_uuid=study.uuid, rows=matrix_rows,
                 uuids=dict(study.players.values_list("name", "uuid")))
    analytics = figures.get("analytics") or {}
    return {
        "figures": figures, "figures_current": current,
        "computed_at": figures.get("computed_at"),
        "slots": slots,
        "models": figures.get("models") or [],
        "matrix": figures.get("matrix"), "matrix_rows": matrix_rows,
        "head_to_head": figures.get("head_to_head") or [],
        "hardening": figures.get("hardening") or [],
        "first_to_final": figures.get("hardening_first_to_final"),
        "ratings": analytics.get("ratings") or [],
        "transitivity": analytics.get("transitivity"),
        "findings": analytics.get("findings") or [],
        "irt": analytics.get("irt"),
        "interval_methods": figures.get("interval_methods") or {},
    }


def version_field_results(*, environment: Environment) -> dict | None:
    """A study version's own field results for its environment page: its row of the study's
    figures, each solver's pairs row, and its lineage (parent chain and revisions)."""
    if environment.study_id is None:
        return None
    study = Study.objects.defer("figures").get(pk=environment.study_id)
    figures, current = study_figures_stored(study=study)
    uuid = str(environment.uuid)
    row = next((item for item in (figures or {}).get("environments") or []
                if item["uuid"] == uuid), None)
    players = dict(study.players.values_list("name", "uuid"))
    pairs = [{**item, "links": pair_links(study_uuid=study.uuid, version_uuid=uuid,
                                          solver_uuid=players.get(item["solver"]), row=item)}
             for item in (figures or {}).get("pairs") or [] if item["version"] == uuid]
    lineage = list(Environment.objects.filter(
        study_id=environment.study_id, author_id=environment.author_id,
        slot=environment.slot).order_by("revision").only(
        "uuid", "title", "slot", "revision", "status", "study_id"))
    valid = [version for version in lineage if version.is_valid]
    author = environment.author.name if environment.author_id else ""
    return {"study": study, "row": row, "pairs": pairs, "current": current,
            "lineage": lineage, "slot_name": f"{author}/{environment.slot}",
            "final": valid[-1] if valid else None,
            "computed_at": (figures or {}).get("computed_at")}


def study_final_items(*, study: Study) -> list[TrainingItem]:
    """Each slot's final version (its last valid one) as an item of an envduels-v1 export:
    its slot and version name, domain, benchmark seeds and graded hints."""
    valid = list(Environment.objects.filter(study=study, status=EnvironmentStatus.VALID)
                 .select_related("author").prefetch_related("hints")
                 .order_by("author__name", "slot", "-revision"))
    items, seen = [], set()
    for version in valid:
        key = (version.author_id, version.slot)
        if key in seen:
            continue  # a higher revision of this slot came first
        seen.add(key)
        levels: dict[int, str] = {}
        for hint in sorted(version.hints.all(), key=lambda hint: (hint.level, hint.pk)):
            levels.setdefault(hint.level, hint.text)  # the first hint of each level
        items.append(TrainingItem(
            design=version.content_hash, environment=str(version.uuid), title=version.title,
            author=version.author.name if version.author else None, family=version.family,
            source=version.source, content_hash=version.content_hash,
            max_steps=version.max_steps, hint=levels.get(1), cluster=version.content_hash,
            hint_levels=tuple(sorted(levels.items())), slot=version.slot,
            version=version.version, domain=version.domain,
            benchmark_seeds=tuple(version.benchmark_seeds or ())))
    return items
