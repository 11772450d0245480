"""The study's figures from its stored plays: the field's rows gathered into the plain records
of duels/studies/figures.py (pure), what EnvDuels adds (duels/analytics/field.py), and the
author × solver matrix; stored on the study with the fingerprint of the data they describe.

Only valid versions count (a version voided after play is invalid), and only decided plays (an
episode infrastructure faults or a cancellation ended is incomplete, never a result). A slot's
final version is its last valid one.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from django.utils import timezone

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.field import field_analytics
from duels.models import (
    DONE_STATUSES,
    Condition,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Study,
    StudySlot,
)
from duels.models.environments import version_name
from duels.scoring import episode_decided, episode_passed
from duels.studies.figures import FieldModel, FieldPlay, FieldVersion, field_figures
from duels.studies.figures_cache import study_figures_fingerprint
from duels.studies.findings import study_solver_not_setter
from duels.studies.headline import headline_checks
from duels.studies.hint_evidence import environment_rows_hint_mattered

RESAMPLES = 1000


@dataclass(frozen=True)
class FieldRows:
    versions: list[FieldVersion]
    plays: list[FieldPlay]
    models: list[FieldModel]
    # The same plays and versions for the joint model, self plays left out.
    episodes: list[EpisodeRecord]
    environments: list[EnvironmentRecord]
    sizes: dict[str, float]


def final_versions(rows: list[tuple[str, int, str, int]]) -> set[str]:
    """The uuids of each slot's final version: its highest valid revision. `rows` are
    (uuid, author id, slot, revision) of valid versions."""
    best: dict[tuple[int, str], tuple[int, str]] = {}
    for uuid, author_id, slot, revision in rows:
        key = (author_id, slot)
        if key not in best or revision > best[key][0]:
            best[key] = (revision, uuid)
    return {uuid for _, uuid in best.values()}


def study_field_rows(*, study: Study) -> FieldRows:
    """The study's valid versions and decided plays as the figures' records (constant number
    of queries, whatever the study's size)."""
    players = {pk: (name, size) for pk, name, size in
               study.players.values_list("pk", "name", "parameters_b")}
    valid = list(Environment.objects.filter(study=study, status=EnvironmentStatus.VALID)
                 .order_by("author__name", "slot", "revision", "pk")
                 .values_list("pk", "uuid", "author_id", "author__name", "slot", "revision",
                              "parent__uuid", "domain", "title", "source", "content_hash"))
    finals = final_versions([(str(row[1]), row[2], row[4], row[5]) for row in valid])
    hints: dict[int, list[str]] = defaultdict(list)
    for environment_id, text in Hint.objects.filter(
            environment__study=study).order_by("level", "pk").values_list("environment_id",
                                                                           "text"):
        hints[environment_id].append(text)
    versions, environments, by_pk = [], [], {}
    for (pk, uuid, _, author, slot, revision, parent, domain, title, source,
         content_hash) in valid:
        name = version_name(slot=slot, revision=revision)
        version = FieldVersion(
            uuid=str(uuid), id=f"{author}/{name}", version=name, slot=f"{author}/{slot}",
            revision=revision, parent=str(parent) if parent else None, author=author,
            domain=domain, final=str(uuid) in finals)
        versions.append(version)
        by_pk[pk] = version
        environments.append(EnvironmentRecord(str(uuid), title, author, True, source,
                                              tuple(hints.get(pk, ())),
                                              content_hash=content_hash))
    plays, episodes = [], []
    for environment_id, solver_id, seed, condition, status, end_reason, success in (
            Episode.objects.filter(study=study, status__in=DONE_STATUSES,
                                   environment_id__in=list(by_pk))
            .order_by("pk").values_list("environment_id", "solver_id", "seed", "condition",
                                        "status", "end_reason", "success")
            .iterator(chunk_size=5000)):
        if not episode_decided(status=status, end_reason=end_reason):
            continue
        version = by_pk[environment_id]
        solver = players[solver_id][0]
        passed = episode_passed(status=status, success=success)
        hinted = condition == Condition.HINTED
        plays.append(FieldPlay(version=version.uuid, solver=solver, seed=seed, hinted=hinted,
                               success=passed))
        if solver != version.author:
            episodes.append(EpisodeRecord(None, version.uuid, solver, hinted, seed, passed))
    names = sorted(name for name, _ in players.values())
    return FieldRows(
        versions=versions, plays=plays, models=[FieldModel(name=name) for name in names],
        episodes=episodes, environments=environments,
        sizes={name: size for name, size in players.values() if size})


def study_failed_slots(*, study: Study) -> dict[str, int]:
    """Per author, the slots that ended without any valid version: each scores 0 in that
    author's head-to-head results, as an invalid environment forfeits a duel side."""
    valid = set(Environment.objects.filter(study=study, status=EnvironmentStatus.VALID)
                .values_list("author_id", "slot"))
    failed: dict[str, int] = defaultdict(int)
    for author_id, name, slot in StudySlot.objects.filter(
            study=study, status__in=DONE_STATUSES).values_list(
            "author_id", "author__name", "slot"):
        if (author_id, slot) not in valid:
            failed[name] += 1
    return dict(failed)


def field_matrix(*, versions: list[FieldVersion], plays: list[FieldPlay]) -> dict:
    """Author × solver pass rates over the slots' final versions, per condition:
    {"authors", "solvers", "cells": {author: {solver: {"unhinted": {"passed", "played",
    "rate"}, "hinted": {…}, "own": bool}}}}."""
    final = {version.uuid: version.author for version in versions if version.final}
    counts: dict[tuple[str, str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for play in plays:
        author = final.get(play.version)
        if author is None:
            continue
        cell = counts[(author, play.solver, play.hinted)]
        cell[0] += play.success
        cell[1] += 1
    authors = sorted({author for author in final.values() if author})
    solvers = sorted({solver for _, solver, _ in counts})
    cells: dict[str, dict[str, dict]] = {}
    for author in authors:
        row = {}
        for solver in solvers:
            entry = {"own": solver == author}
            for condition, hinted in (("unhinted", False), ("hinted", True)):
                passed, played = counts.get((author, solver, hinted), (0, 0))
                entry[condition] = {"passed": passed, "played": played,
                                    "rate": passed / played if played else None}
            row[solver] = entry
        cells[author] = row
    return {"authors": authors, "solvers": solvers, "cells": cells}


def study_figures_compute(*, study: Study, resamples: int = RESAMPLES) -> dict:
    """Every figure of the study from its stored plays (the shape docs/json-outputs.md gives
    for `analytics --study`, plus the matrix and what EnvDuels adds)."""
    rows = study_field_rows(study=study)
    figures = field_figures(versions=rows.versions, plays=rows.plays, models=rows.models,
                            resamples=resamples, failed_slots=study_failed_slots(study=study))
    figures["matrix"] = field_matrix(versions=rows.versions, plays=rows.plays)
    figures["environments"] = environment_rows_hint_mattered(
        study_id=study.pk, rows=figures["environments"])
    figures["analytics"] = field_analytics(
        players=[model.name for model in rows.models], head_to_head=figures["head_to_head"],
        episodes=rows.episodes, environments=rows.environments, sizes=rows.sizes,
        resamples=resamples)
    figures["headline"]["checks"] = headline_checks(
        headline=figures["headline"], rows=figures["models"], analytics=figures["analytics"])
    findings = figures["analytics"].get("findings") or []
    if findings and findings[0]["id"] == "solver_not_setter":
        findings[0] = study_solver_not_setter(headline=figures["headline"],
                                              rows=figures["models"])
    figures["counts"] = {"versions": len(rows.versions), "plays": len(rows.plays),
                         "final_versions": sum(v.final for v in rows.versions)}
    return figures


def study_figures_refresh(*, study: Study, resamples: int = RESAMPLES) -> dict:
    """Compute the study's figures and store them with the fingerprint of their data."""
    started = time.perf_counter()
    # The fingerprint first: plays stored while computing make the figures stale, never
    # falsely current.
    fingerprint = study_figures_fingerprint(study=study)
    computed_at = timezone.now()
    figures = study_figures_compute(study=study, resamples=resamples)
    figures["computed_at"] = computed_at.isoformat()
    figures["duration_ms"] = round((time.perf_counter() - started) * 1000)
    Study.objects.filter(pk=study.pk).update(figures=figures, figures_fingerprint=fingerprint,
                                             figures_computed_at=computed_at)
    return figures


def study_figures_refresh_by_uuid(*, study_uuid: str) -> int:
    """The background task's body: refresh one study's figures; milliseconds it took."""
    study = Study.objects.filter(uuid=study_uuid).first()
    if study is None:
        return 0
    return study_figures_refresh(study=study)["duration_ms"]


def study_figures_current(*, study: Study) -> dict:
    """The study's figures as its data stands: the stored ones when current, else computed
    now (the command line's `analytics --study`)."""
    stored = Study.objects.filter(pk=study.pk).values_list(
        "figures", "figures_fingerprint").first()
    if stored and stored[0] is not None and stored[1] == study_figures_fingerprint(study=study):
        return stored[0]
    return study_figures_refresh(study=study)
