"""Any number of evaluations of one panel side by side, per version and per seed: who passed in
which condition, each cell linking the evaluation's paired transcripts (the unhinted and the
hinted play of that seed) in compare, and the rows filtered to what changed.

Filters (each row is one version and one benchmark seed):
- `flipped`: some chosen evaluation failed the seed unhinted and passed it hinted (a flip, as
  a duel counts them: the hint turned a fail into a pass);
- `regressed`: the first chosen evaluation passed the seed in a condition that a later one
  failed;
- `only`: exactly one chosen evaluation passed the seed in a condition, and it is `only`.
A play that is not decided (not played yet, or ended without a result) is neither passed nor
failed, and never matches a filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from duels.models import DONE_STATUSES, Condition, EnvironmentStatus, Episode, Evaluation
from duels.panels.errors import PanelError
from duels.scoring import episode_decided, episode_passed

MAX_COMPARED = 12
FILTERS = {
    "all": "every seed",
    "flipped": "flipped: failed unhinted, passed hinted by some evaluation",
    "regressed": "regressed: passed by the first evaluation, failed by a later one",
    "only": "only this one solved: passed by the chosen evaluation alone",
}
CONDITIONS = (("unhinted", Condition.UNHINTED), ("hinted", Condition.HINTED))


@dataclass(frozen=True)
class Play:
    episode: str  # uuid
    passed: bool | None  # None: not decided


def _plays(evaluations: list[Evaluation]) -> dict[tuple, Play]:
    """(evaluation id, environment id, seed, condition) -> the play. One query."""
    plays = {}
    for row in (Episode.objects.filter(evaluation__in=evaluations)
                .values_list("evaluation_id", "environment_id", "seed", "condition", "uuid",
                             "status", "end_reason", "success")):
        evaluation_id, environment_id, seed, condition, uuid, status, end_reason, success = row
        decided = status in DONE_STATUSES and episode_decided(status=status,
                                                              end_reason=end_reason)
        plays[(evaluation_id, environment_id, seed, condition)] = Play(
            episode=str(uuid),
            passed=episode_passed(status=status, success=success) if decided else None)
    return plays


def _matches(cells: list[dict], show: str, only_index: int | None) -> bool:
    if show == "flipped":
        return any(cell["unhinted"] and cell["hinted"] and cell["unhinted"].passed is False
                   and cell["hinted"].passed is True for cell in cells)
    if show == "regressed":
        first, later = cells[0], cells[1:]
        return any(first[name] and first[name].passed is True
                   and any(cell[name] and cell[name].passed is False for cell in later)
                   for name, _ in CONDITIONS)
    if show == "only":
        return any([index for index, cell in enumerate(cells)
                    if cell[name] and cell[name].passed is True] == [only_index]
                   for name, _ in CONDITIONS)
    return True


def evaluations_grid(*, evaluations: list[Evaluation], show: str = "all",
                     only: Evaluation | None = None) -> dict[str, Any]:
    """{"evaluations": [{"evaluation", "player", "hint_level"}], "show", "only",
    "versions": [{"id", "uuid", "author", "domain", "seeds": [{"seed", "cells": [per
    evaluation {"unhinted", "hinted": {"episode", "passed"} or None, "compare": url or None}]}]}],
    "rows": how many (version, seed) rows match}: the panel's valid versions in its order,
    each with the seeds some chosen evaluation played."""
    if not evaluations:
        raise PanelError("choose at least one evaluation of this panel")
    if len(evaluations) > MAX_COMPARED:
        raise PanelError(f"choose at most {MAX_COMPARED} evaluations at once")
    if len({evaluation.panel_id for evaluation in evaluations}) != 1:
        raise PanelError("the evaluations are of different panels: compare evaluations of "
                         "one panel")
    if show not in FILTERS:
        raise PanelError(f"no filter {show[:40]!r}: the filters are {', '.join(FILTERS)}")
    only_index = None
    if show == "only":
        if only is None or only not in evaluations:
            raise PanelError("“only this one solved” needs one of the chosen evaluations")
        only_index = evaluations.index(only)
    plays = _plays(evaluations)
    played_seeds: dict[int, set[int]] = {}
    for (_, environment_id, seed, _) in plays:
        played_seeds.setdefault(environment_id, set()).add(seed)
    versions, matching = [], 0
    panel = evaluations[0].panel
    for entry in (panel.entries.select_related("environment").order_by("position")
                  .only("entry_id", "author", "domain", "benchmark_seeds", "environment__uuid",
                        "environment__status")):
        if entry.environment.status != EnvironmentStatus.VALID:
            continue
        seeds = [seed for seed in entry.benchmark_seeds
                 if seed in played_seeds.get(entry.environment_id, ())]
        rows = []
        for seed in seeds:
            cells = []
            for evaluation in evaluations:
                cell = {name: plays.get((evaluation.pk, entry.environment_id, seed, condition))
                        for name, condition in CONDITIONS}
                cell["compare"] = (f"/compare/?a={cell['unhinted'].episode}"
                                   f"&b={cell['hinted'].episode}"
                                   if cell["unhinted"] and cell["hinted"] else None)
                cells.append(cell)
            if _matches(cells, show, only_index):
                rows.append({"seed": seed, "cells": cells})
        matching += len(rows)
        if rows:
            versions.append({"id": entry.entry_id, "uuid": str(entry.environment.uuid),
                             "author": entry.author or None, "domain": entry.domain,
                             "seeds": rows})
    return {"evaluations": [{"evaluation": str(evaluation.uuid),
                             "player": evaluation.player.name,
                             "hint_level": evaluation.hint_level} for evaluation in evaluations],
            "show": show, "only": str(only.uuid) if only_index is not None else None,
            "versions": versions, "rows": matching}


def grid_json(grid: dict[str, Any]) -> dict[str, Any]:
    """The grid with each play as {"episode", "passed"} (JSON)."""
    def play(value: Play | None) -> dict | None:
        return None if value is None else {"episode": value.episode, "passed": value.passed}

    return {**grid, "versions": [
        {**version, "seeds": [{"seed": row["seed"], "cells": [
            {"unhinted": play(cell["unhinted"]), "hinted": play(cell["hinted"]),
             "compare": cell["compare"]} for cell in row["cells"]]}
            for row in version["seeds"]]}
        for version in grid["versions"]]}
