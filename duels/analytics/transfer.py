"""Transfer: does a learner's hint gain on an environment predict its improvement after training?

Each imported TransferResult (learner, environment or author, before, after) is joined with the
learner's own hint gain on that environment (or pooled over that author's environments) from
episodes where the learner was the solver. Spearman ρ with a bootstrap interval, and the partial
rank correlation controlling for the learner's baseline (unhinted) pass rate there.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from duels.analytics.data import EnvironmentRecord, EpisodeRecord, TransferRecord
from duels.analytics.intervals import average_ranks, pearson_rows, percentile_interval


def transfer_points(
    *,
    transfers: Sequence[TransferRecord],
    episodes: Sequence[EpisodeRecord],
    environments: Sequence[EnvironmentRecord],
) -> list[dict]:
    """Joinable transfer rows: learner, target, hint gain, baseline pass rate, improvement."""
    author_of = {env.uuid: env.author for env in environments}
    # tally[(learner, key)] = [unhinted passes, unhinted n, hinted passes, hinted n]
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for episode in episodes:
        offset = 2 if episode.hinted else 0
        for key in (("env", episode.environment), ("author", author_of.get(episode.environment))):
            counts = tally[(episode.solver, key)]
            counts[offset] += episode.success
            counts[offset + 1] += 1
    rows = []
    for record in transfers:
        key = ("env", record.environment) if record.environment else ("author", record.author)
        counts = tally.get((record.learner, key))
        if not counts or not counts[1] or not counts[3]:
            continue
        baseline = counts[0] / counts[1]
        rows.append({
            "learner": record.learner,
            "target": record.environment or record.author,
            "benchmark": record.benchmark,
            "hint_gain": counts[2] / counts[3] - baseline,
            "baseline": baseline,
            "improvement": record.after - record.before,
        })
    return rows


def partial_spearman(x: np.ndarray, y: np.ndarray, control: np.ndarray) -> float | None:
    """Rank correlation of x and y with the control's ranks partialled out."""
    rx, ry, rz = (average_ranks(v) for v in (x, y, control))
    r_xy, r_xz, r_yz = (float(pearson_rows(a, b)) for a, b in ((rx, ry), (rx, rz), (ry, rz)))
    if any(math.isnan(r) for r in (r_xy, r_xz, r_yz)):
        return None
    denominator = math.sqrt((1 - r_xz**2) * (1 - r_yz**2))
    if denominator < 1e-12:
        return None
    return (r_xy - r_xz * r_yz) / denominator


def transfer_fit(*, rows: Sequence[dict], resamples: int = 200, seed: int = 0) -> dict | None:
    """Spearman ρ(hint gain, improvement) with a bootstrap interval; None below 3 rows."""
    if len(rows) < 3:
        return None
    gain = np.array([row["hint_gain"] for row in rows])
    improvement = np.array([row["improvement"] for row in rows])
    baseline = np.array([row["baseline"] for row in rows])
    rho = float(pearson_rows(average_ranks(gain), average_ranks(improvement)))
    if math.isnan(rho):
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rows), size=(resamples, len(rows)))
    boot = pearson_rows(average_ranks(gain[draws]), average_ranks(improvement[draws]))
    low, high = percentile_interval(boot[:, None])
    return {
        "spearman": rho,
        "low": float(low[0]),
        "high": float(high[0]),
        "n": len(rows),
        "partial": partial_spearman(gain, improvement, baseline),
        "method": f"Spearman ρ; bootstrap percentile interval, {resamples} resamples of rows",
    }


