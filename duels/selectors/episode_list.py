"""Every episode, filterable by solver, setter, condition, outcome, environment, tournament,
study, version, domain, seed, a study's final versions, peer plays and pairs the hint flipped
(`/episodes/`), and the same facets for the cross-transcript search's results. The study page's
figures link here with exactly the filters of the plays behind each number.

A page is one query whatever the data size (players, environments, duels, tournaments and
studies joined), newest first, cut by a cursor (`before`, the last episode shown) instead of a
count, so a page of the newest episodes costs what a page of the oldest costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Coalesce

from duels.models import Condition, Environment, EnvironmentStatus, Episode, Status

PAGE_SIZE = 50
# What an episode's outcome can be, as the list names it: passed (finished with success), not
# passed (finished without: a normal loss or an environment fault), a result (either of those,
# as duels.scoring.episode_decided counts plays for every figure), no result (an infrastructure
# failure or a cancellation: never a result), not ended (pending or running). Each outcome is a
# condition built with `on` (which adds the path to the episode).
_FAULT = "env_error"  # EndReason.ENV_ERROR: the environment's fault, a result (not passed)


def _not_passed(on) -> Q:
    return ((on(status=Status.FINISHED) & ~on(success=True))
            | on(status=Status.FAILED, end_reason=_FAULT))


OUTCOMES = {
    "passed": ("passed", lambda on: on(status=Status.FINISHED, success=True)),
    "not_passed": ("not passed", _not_passed),
    "decided": ("a result (passed or not passed)",
                lambda on: on(status=Status.FINISHED) | on(status=Status.FAILED,
                                                            end_reason=_FAULT)),
    "no_result": ("no result (infrastructure fault or cancelled)",
                  lambda on: (on(status=Status.FAILED) & ~on(end_reason=_FAULT))
                  | on(status=Status.CANCELLED)),
    "not_ended": ("not ended (pending or running)",
                  lambda on: on(status__in=[Status.PENDING, Status.RUNNING])),
}


@dataclass(frozen=True)
class EpisodeFilters:
    """What episodes may be narrowed by; empty values mean no filter. `environment` names a
    design by any of its copies (every copy's episodes are listed)."""

    solver: UUID | None = None
    setter: UUID | None = None
    condition: str = ""
    outcome: str = ""
    environment: UUID | None = None
    tournament: UUID | None = None
    study: UUID | None = None
    evaluation: UUID | None = None
    # `version` is that exact environment (`environment` takes every copy of its design).
    version: UUID | None = None
    domain: str = ""
    seed: int | None = None
    final: bool = False  # only each study slot's final version (its last valid one)
    peers: bool = False  # the solver is not the environment's author
    flipped: bool = False  # both plays of a solver and seed that failed unhinted, passed hinted

    @property
    def any(self) -> bool:
        return self != EpisodeFilters()


def episode_filters_q(filters: EpisodeFilters, *, prefix: str = "") -> Q:
    """The filters as a condition on episodes (`prefix="episode__"` for one on steps)."""
    condition = Q()

    def on(**lookups) -> Q:
        return Q(**{f"{prefix}{name}": value for name, value in lookups.items()})

    if filters.solver:
        condition &= on(solver__uuid=filters.solver)
    if filters.setter:
        condition &= on(environment__author__uuid=filters.setter)
    if filters.condition in Condition.values:
        condition &= on(condition=filters.condition)
    if filters.outcome in OUTCOMES:
        condition &= OUTCOMES[filters.outcome][1](on)
    if filters.environment:
        design = Environment.objects.filter(uuid=filters.environment).values("content_hash")
        condition &= on(environment__content_hash__in=design)
    if filters.tournament:
        condition &= on(duel__tournament__uuid=filters.tournament)
    if filters.study:
        condition &= on(study__uuid=filters.study)
    if filters.evaluation:
        condition &= on(evaluation__uuid=filters.evaluation)
    if filters.version:
        condition &= on(environment__uuid=filters.version)
    if filters.domain:
        condition &= on(environment__domain=filters.domain)
    if filters.seed is not None:
        condition &= on(seed=filters.seed)
    if filters.final:
        condition &= on(environment__in=final_versions())
    if filters.peers:
        condition &= ~on(solver_id=F(f"{prefix}environment__author_id")) | on(
            environment__author__isnull=True)
    if filters.flipped:
        condition &= on(pk__in=flipped_plays())
    return condition


def final_versions() -> QuerySet[Environment]:
    """Each study slot's final version: valid, with no valid later revision (a subquery)."""
    later = Environment.objects.filter(
        study_id=OuterRef("study_id"), author_id=OuterRef("author_id"), slot=OuterRef("slot"),
        revision__gt=OuterRef("revision"), status=EnvironmentStatus.VALID)
    return (Environment.objects.filter(study__isnull=False, status=EnvironmentStatus.VALID)
            .filter(~Exists(later)).values("pk"))


def _same_run() -> dict:
    """The partner play's lookups: the same environment, solver and seed in the same run (duel,
    study or panel evaluation; none is a run too)."""
    return {"environment_id": OuterRef("environment_id"), "solver_id": OuterRef("solver_id"),
            "seed": OuterRef("seed"),
            **{f"{run}_run": Coalesce(OuterRef(f"{run}_id"), Value(0))
               for run in ("duel", "study", "evaluation")}}


def flipped_plays() -> QuerySet[Episode]:
    """The plays of every pair the hint flipped: the unhinted play that did not pass and the
    hinted play of the same solver and seed in the same run that passed (a subquery)."""
    runs = {f"{run}_run": Coalesce(f"{run}_id", Value(0))
            for run in ("duel", "study", "evaluation")}
    passed = Q(status=Status.FINISHED, success=True)
    partners = Episode.objects.alias(**runs).filter(**_same_run())
    unhinted_failed = (_not_passed(Q) & Q(condition=Condition.UNHINTED)
                       & Exists(partners.filter(passed, condition=Condition.HINTED)))
    hinted_passed = (passed & Q(condition=Condition.HINTED)
                     & Exists(partners.filter(_not_passed(Q), condition=Condition.UNHINTED)))
    return Episode.objects.filter(unhinted_failed | hinted_passed).values("pk")


def episode_list(*, filters: EpisodeFilters | None = None) -> QuerySet[Episode]:
    """Episodes, newest first, with what a row shows joined."""
    return (Episode.objects.filter(episode_filters_q(filters or EpisodeFilters()))
            .select_related("solver", "environment__author", "duel__a", "duel__b",
                            "duel__tournament", "study", "evaluation__panel")
            .order_by("-pk"))


@dataclass(frozen=True)
class EpisodePage:
    episodes: list[Episode]
    next_before: int | None  # the cursor of the next (older) page; None on the last one


def episode_list_page(*, filters: EpisodeFilters | None = None, before: int | None = None,
                      limit: int = PAGE_SIZE) -> EpisodePage:
    """One page of `episode_list`: at most `limit` episodes older than `before`."""
    episodes = episode_list(filters=filters)
    if before is not None:
        episodes = episodes.filter(pk__lt=before)
    rows = list(episodes[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return EpisodePage(episodes=rows, next_before=rows[-1].pk if more and rows else None)
