"""Every run of one environment and seed side by side: both conditions, every solver.

Rows are step indices, columns are runs; a cell is marked where its action or observation is not
what most runs did at that step (or the run has no such step), and the first such index is the
first divergence, as the two-run comparison marks it.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from duels.models import Episode, Step

MAX_RUNS = 24
MAX_ROWS = 500


def episode_runs_compare(*, episode: Episode, limit: int = MAX_ROWS) -> dict:
    """The runs sharing `episode`'s environment and seed, with their steps aligned by index."""
    runs = list(
        Episode.objects.filter(environment_id=episode.environment_id, seed=episode.seed)
        .select_related("solver", "hint")
        .order_by("condition", "solver__name", "created_at", "pk")[: MAX_RUNS + 1]
    )
    more_runs = len(runs) > MAX_RUNS
    runs = runs[:MAX_RUNS]
    cells: dict[int, dict[int, dict]] = defaultdict(dict)
    rows = (
        Step.objects.filter(episode_id__in=[run.pk for run in runs], index__lte=limit)
        .order_by("index")
        .values("episode_id", "index", "action", "observation", "reward", "done", "success",
                "format_error")
    )
    for row in rows:
        cells[row["index"]][row["episode_id"]] = row
    indices = sorted(cells)
    truncated = bool(indices) and indices[-1] >= limit
    table = []
    divergence = None
    for index in indices[:limit]:
        present = cells[index]
        usual = Counter((step["action"], step["observation"]) for step in present.values())
        common = usual.most_common(1)[0][0]
        row_cells = []
        for run in runs:
            step = present.get(run.pk)
            differs = step is None or (step["action"], step["observation"]) != common
            row_cells.append({"run": run, "step": step, "differs": differs})
        differs = any(cell["differs"] for cell in row_cells)
        if differs and divergence is None:
            divergence = index
        table.append({"index": index, "cells": row_cells, "differs": differs,
                      "first_divergence": differs and divergence == index})
    return {"runs": runs, "rows": table, "divergence": divergence, "truncated": truncated,
            "more_runs": more_runs}
