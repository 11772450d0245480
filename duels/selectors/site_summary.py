"""Reads for a published tournament site: the figures of the chosen tournaments alone (ratings,
findings) and the setter × solver hint-gain table, pooled over their finished duels."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from uuid import UUID

from duels.analytics.bootstrap import BOOTSTRAP_RESAMPLES
from duels.analytics.data import AnalyticsInput
from duels.analytics.proportions import newcombe_difference
from duels.models import Duel, Episode, Status, Tournament
from duels.scoring import episode_passed
from duels.selectors.analytics import analytics_input


@dataclass(frozen=True)
class GainCell:
    """One setter's environments as one solver played them, pooled over duels."""

    unhinted_passed: int
    unhinted_n: int
    hinted_passed: int
    hinted_n: int

    @property
    def hint_gain(self) -> float | None:
        if not (self.unhinted_n and self.hinted_n):
            return None
        return self.hinted_passed / self.hinted_n - self.unhinted_passed / self.unhinted_n

    @property
    def interval(self) -> tuple[float, float] | None:
        if not (self.unhinted_n and self.hinted_n):
            return None
        return newcombe_difference(self.hinted_passed, self.hinted_n, self.unhinted_passed,
                                   self.unhinted_n)


def site_tournaments(*, tournament_uuids: list[UUID]) -> list[Tournament]:
    """The named tournaments in the order given; a missing one is a ValueError naming it."""
    found = {t.uuid: t for t in Tournament.objects.filter(uuid__in=tournament_uuids)}
    missing = [str(value) for value in tournament_uuids if value not in found]
    if missing:
        raise ValueError(f"no tournament {missing[0]}")
    return [found[value] for value in dict.fromkeys(tournament_uuids)]


def site_analytics_input(*, duel_uuids: set[str]) -> AnalyticsInput:
    """The installation's analytics records narrowed to these duels, their episodes, their
    environments and their players (compliance and sizes of those players only)."""
    data = analytics_input()
    duels = tuple(duel for duel in data.duels if duel.uuid in duel_uuids)
    keys = {duel.key for duel in duels}
    players = {name for duel in duels for name in (duel.a, duel.b)}
    environments = {env for duel in duels for env in (duel.env_a, duel.env_b) if env}
    return replace(
        data,
        players=tuple(name for name in data.players if name in players),
        duels=duels,
        episodes=tuple(e for e in data.episodes if e.duel in keys),
        environments=tuple(e for e in data.environments if e.uuid in environments),
        transfers=tuple(t for t in data.transfers if t.environment in environments),
        sizes=tuple(size for size in data.sizes if size[0] in players),
        compliance=tuple(c for c in data.compliance if c.solver in players),
    )


def site_figures(*, duel_uuids: set[str]) -> dict:
    """Every analytics figure computed on these duels alone (as `analytics --json`, with the
    site's own resample count and seed: on the same duels the figures are the site's)."""
    from duels.analytics.compute import analytics_compute  # the statistics stack is slow to import

    return analytics_compute(site_analytics_input(duel_uuids=duel_uuids),
                             resamples=BOOTSTRAP_RESAMPLES)


def site_gain_table(*, duels: list[Duel]) -> dict:
    """Setter × solver hint gains over the finished duels' played sides (one query).

    Returns `{"setters": [names], "solvers": [names], "rows": [{"setter", "cells": [GainCell
    or None]}]}`; a forfeited side has no episodes and so adds nothing.
    """
    finished = {duel.pk: duel for duel in duels if duel.status == Status.FINISHED}
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    rows = Episode.objects.filter(
        duel_id__in=list(finished), status__in=[Status.FINISHED, Status.FAILED]).values_list(
        "duel_id", "environment_id", "solver__name", "hint_id", "status", "success")
    for duel_id, environment_id, solver, hint_id, status, success in rows.iterator():
        duel = finished[duel_id]
        setter = duel.a.name if environment_id == duel.env_a_id else duel.b.name
        cell = counts[(setter, solver)]
        offset = 2 if hint_id else 0
        cell[offset] += episode_passed(status=status, success=success)
        cell[offset + 1] += 1
    setters = sorted({setter for setter, _ in counts})
    solvers = sorted({solver for _, solver in counts})
    return {
        "setters": setters,
        "solvers": solvers,
        "rows": [{"setter": setter,
                  "cells": [GainCell(*counts[(setter, solver)]) if (setter, solver) in counts
                            else None for solver in solvers]}
                 for setter in setters],
    }
