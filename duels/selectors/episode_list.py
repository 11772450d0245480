"""Every episode, filterable by solver, setter, condition, outcome, environment, tournament or
study (`/episodes/`), and the same facets for the cross-transcript search's results.

A page is one query whatever the data size (players, environments, duels, tournaments and
studies joined), newest first, cut by a cursor (`before`, the last episode shown) instead of a
count, so a page of the newest episodes costs what a page of the oldest costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Q, QuerySet

from duels.models import Condition, Environment, Episode, Status

PAGE_SIZE = 50
# What an episode's outcome can be, as the list names it: passed (finished with success), not
# passed (finished without: a normal loss or an environment fault), no result (an
# infrastructure failure or a cancellation: never a result), not ended (pending or running).
# Each outcome is a condition built with `on` (which adds the path to the episode).
OUTCOMES = {
    "passed": ("passed", lambda on: on(status=Status.FINISHED, success=True)),
    "not_passed": ("not passed", lambda on: on(status=Status.FINISHED) & ~on(success=True)),
    "no_result": ("no result (failed or cancelled)",
                  lambda on: on(status__in=[Status.FAILED, Status.CANCELLED])),
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
    return condition


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
