"""The panel's ranking: every player that played the panel, evaluated here or imported as
outside outcomes, with the study's figures (duels/studies/figures.py, the same functions).

The panel's versions are gathered into FieldVersions (each one final: a panel holds the versions
it is played on), the imported outcomes and the evaluations' decided plays into FieldPlays, the
players into FieldModels (`imported` for outside outcomes, `evaluated` for players evaluated
here: never a peer). Only valid versions count and only decided plays (an incomplete one is never
a result). A ranking is of one hint level: the hinted plays of every player played that level.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from duels.models import (
    DONE_STATUSES,
    Condition,
    EnvironmentStatus,
    Episode,
    Evaluation,
    OutcomeStatus,
    OutsideOutcome,
    Panel,
)
from duels.scoring import episode_decided, episode_passed
from duels.studies.figures import FieldModel, FieldPlay, FieldVersion, field_figures
from duels.studies.headline import headline_checks

RESAMPLES = 1000
RANKING_PARTS = ("models", "environments", "pairs")


@dataclass(frozen=True)
class PanelRows:
    versions: list[FieldVersion]
    plays: list[FieldPlay]
    models: list[FieldModel]
    # The first player evaluated here (the oldest evaluation): every hint gain is compared with
    # it, a baseline that stays put as more players are evaluated.
    new_solver: str | None
    incomplete: dict[str, int]  # per model, plays ended without a result (never counted)


def panel_versions(*, panel: Panel) -> list[FieldVersion]:
    """The panel's valid versions, in its order, as the figures' records."""
    versions = []
    for entry in (panel.entries.select_related("environment").order_by("position")):
        environment = entry.environment
        if environment.status != EnvironmentStatus.VALID:
            continue
        versions.append(FieldVersion(
            uuid=str(environment.uuid), id=entry.entry_id,
            version=environment.version if environment.slot else "", slot=entry.entry_id,
            revision=0, parent=None, author=entry.author or None, domain=entry.domain,
            final=True))
    return versions


def panel_rows(*, panel: Panel, hint_level: int = 1) -> PanelRows:
    """The panel's versions and every decided play on them at `hint_level` (a constant number
    of queries, whatever the panel's size)."""
    versions = panel_versions(panel=panel)
    by_environment = {version.uuid: version for version in versions}
    plays: list[FieldPlay] = []
    incomplete: dict[str, int] = defaultdict(int)
    imported: set[str] = set()
    evaluations = list(Evaluation.objects.filter(panel=panel, hint_level=hint_level)
                       .order_by("created_at", "pk").values_list("pk", "player__name"))
    # Outside outcomes stored under the name of a player evaluated here (imports refuse them
    # now; older data may hold some) are left out: the player's own plays are its result.
    own = {name for _, name in evaluations}
    for model, uuid, seed, hinted, trial, status in (
            OutsideOutcome.objects.filter(panel=panel, hint_level=hint_level)
            .exclude(model__in=own)
            .order_by("pk").values_list("model", "entry__environment__uuid", "seed", "hinted",
                                        "trial", "status")):
        imported.add(model)
        if str(uuid) not in by_environment:
            continue
        if status == OutcomeStatus.INCOMPLETE:
            incomplete[model] += 1
            continue
        plays.append(FieldPlay(version=str(uuid), solver=model, seed=seed, hinted=hinted,
                               success=status == OutcomeStatus.SUCCESS, trial=trial))
    names = dict(evaluations)
    for evaluation_id, uuid, seed, condition, status, end_reason, success in (
            Episode.objects.filter(evaluation__in=list(names), status__in=DONE_STATUSES)
            .order_by("pk").values_list("evaluation_id", "environment__uuid", "seed",
                                        "condition", "status", "end_reason", "success")):
        name = names[evaluation_id]
        if str(uuid) not in by_environment:
            continue
        if not episode_decided(status=status, end_reason=end_reason):
            incomplete[name] += 1
            continue
        plays.append(FieldPlay(version=str(uuid), solver=name, seed=seed,
                               hinted=condition == Condition.HINTED,
                               success=episode_passed(status=status, success=success)))
    evaluated = [name for _, name in evaluations]
    models = ([FieldModel(name=name, imported=True) for name in sorted(imported)]
              + [FieldModel(name=name, evaluated=True) for name in sorted(set(evaluated))
                 if name not in imported])
    return PanelRows(versions=versions, plays=plays, models=models,
                     new_solver=evaluated[0] if evaluated else None,
                     incomplete=dict(incomplete))


def panel_ranking_compute(*, panel: Panel, hint_level: int = 1,
                          resamples: int = RESAMPLES) -> dict:
    """The panel's ranking at `hint_level`: `models` (each with its intervals), `environments`
    (per version) and `pairs` (per version and player), as `analytics --panel` prints them,
    plus the new solver, the imported models and the incomplete plays left out."""
    rows = panel_rows(panel=panel, hint_level=hint_level)
    if not rows.models or not rows.versions:
        figures = {"models": [], "environments": [], "pairs": []}
    else:
        figures = field_figures(versions=rows.versions, plays=rows.plays, models=rows.models,
                                new_solver=rows.new_solver, resamples=resamples,
                                parts=RANKING_PARTS)
    figures.pop("head_to_head", None)  # a study's only: a panel's authors played no duel
    figures.pop("hardening", None)
    figures.pop("hardening_first_to_final", None)
    if figures.get("headline"):
        figures["headline"]["checks"] = headline_checks(headline=figures["headline"],
                                                        rows=figures["models"])
    figures["hint_level"] = hint_level
    figures["new_solver"] = rows.new_solver
    figures["incomplete"] = rows.incomplete
    figures["counts"] = {"versions": len(rows.versions), "plays": len(rows.plays)}
    return figures
