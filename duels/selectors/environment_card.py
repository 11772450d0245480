"""The figures that head an environment's page: its hint gain with a 95% interval and each
solver's pass rates without and with the hint.

Counted the way the environments list counts them: finished episodes, passed = finished with
success (any other end is not passed), so the page and the list always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from duels.analytics.proportions import newcombe_difference, wilson_interval
from duels.models import Condition


@dataclass(frozen=True)
class Rate:
    passed: int
    episodes: int

    @property
    def value(self) -> float | None:
        return self.passed / self.episodes if self.episodes else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.passed, self.episodes) if self.episodes else None


@dataclass(frozen=True)
class GainFigure:
    unhinted: Rate
    hinted: Rate

    @property
    def value(self) -> float | None:
        if not (self.unhinted.episodes and self.hinted.episodes):
            return None
        return self.hinted.value - self.unhinted.value

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.value is None:
            return None
        return newcombe_difference(
            self.hinted.passed, self.hinted.episodes, self.unhinted.passed, self.unhinted.episodes
        )


def environment_card(*, outcomes: list[dict]) -> dict:
    """Overall and per-solver figures from `environment_outcomes` rows (no further query).

    Returns `{"overall": GainFigure, "solvers": [{"name", "uuid", "figure": GainFigure}]}`.
    """
    totals = {Condition.UNHINTED: [0, 0], Condition.HINTED: [0, 0]}
    solvers: dict[str, dict] = {}
    for row in outcomes:
        entry = solvers.setdefault(
            str(row["solver__uuid"]),
            {"name": row["solver__name"], "uuid": row["solver__uuid"],
             Condition.UNHINTED: [0, 0], Condition.HINTED: [0, 0]},
        )
        entry[row["condition"]][0] += row["passed"]
        entry[row["condition"]][1] += row["episodes"]
        totals[row["condition"]][0] += row["passed"]
        totals[row["condition"]][1] += row["episodes"]

    def figure(counts: dict) -> GainFigure:
        return GainFigure(
            unhinted=Rate(*counts[Condition.UNHINTED]), hinted=Rate(*counts[Condition.HINTED])
        )

    return {
        "overall": figure(totals),
        "solvers": [
            {"name": entry["name"], "uuid": entry["uuid"], "figure": figure(entry)}
            for entry in sorted(solvers.values(), key=lambda entry: entry["name"])
        ],
    }

