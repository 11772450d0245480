"""The study's figures at full size, and their intervals' coverage (run by hand; not part of
make test).

    .venv/bin/python benchmarks/study_figures_bench.py [--runs 3] [--coverage] [--studies 200]

Timing: a synthetic field of 9 players × 10 environments × 4 seeds × (1 + 1 hardening round),
both conditions, every player on every version (12,960 plays), built once; then
`field_figures` with intervals (1,000 resamples) and without, each timed `--runs` times in
alternation (wall and CPU seconds, best and median), and the share of the 60-second budget.

`--coverage` simulates studies with planted truths (tests/helpers/planted_field.py) at several
shapes and prints, per interval, the share that holds its truth and the mean width: canonical
solve, design and hint gain (per model), the first hardening round's change of the unhinted
pass rate (per study), and a version's peer discrimination and unhinted pass rate (per
version, given its drawn difficulty).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duels.studies.figures import field_figures  # noqa: E402
from tests.helpers.planted_field import (  # noqa: E402
    COVERED,
    field_coverage,
    field_rows,
    planted_truth,
    simulate_field,
    true_hardening_change,
    true_version_figures,
)

BUDGET_SECONDS = 60.0
SHIFT = 0.8


def full_size_field() -> dict:
    truth = planted_truth(players=9, domains=2)
    simulated = simulate_field(truth, np.random.default_rng(0), per_author=10, seeds=4,
                               harden_rounds=1, harden_shift=SHIFT)
    return field_rows(truth, simulated)


def timed(rows: dict, *, intervals: bool) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    field_figures(**rows, intervals=intervals, resamples=1000)
    return time.perf_counter() - wall, time.process_time() - cpu


def timing(runs: int) -> None:
    started = time.perf_counter()
    rows = full_size_field()
    print(f"field: {len(rows['versions'])} versions, {len(rows['plays'])} plays, "
          f"{len(rows['models'])} models (built in {time.perf_counter() - started:.2f} s)")
    timed(rows, intervals=True)  # warm: imports and first allocations
    results = {True: [], False: []}
    for _ in range(runs):
        for intervals in (True, False):
            results[intervals].append(timed(rows, intervals=intervals))
    for intervals, label in ((True, "with intervals (1,000 resamples)"),
                             (False, "without intervals")):
        wall = [w for w, _ in results[intervals]]
        cpu = [c for _, c in results[intervals]]
        print(f"field_figures {label}: wall best {min(wall):.2f} s, median "
              f"{statistics.median(wall):.2f} s; CPU best {min(cpu):.2f} s, median "
              f"{statistics.median(cpu):.2f} s")
    best = min(w for w, _ in results[True])
    print(f"with intervals: {best / BUDGET_SECONDS:.3f} of the {BUDGET_SECONDS:.0f} s budget; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def _per_version_and_hardening(studies: int) -> None:
    """Hardening and per-version intervals at the full size (9 players, 10 environments each,
    two domains, k = 4, one round)."""
    truth = planted_truth(players=9, domains=2)
    change = true_hardening_change(truth, shift=SHIFT)
    hits = {"p_unhinted_change": [], "peer_discrimination": [], "p_unhinted": []}
    widths = {name: [] for name in hits}
    for study in range(studies):
        simulated = simulate_field(truth, np.random.default_rng([7, study]), per_author=10,
                                   seeds=4, harden_rounds=1, harden_shift=SHIFT)
        figures = field_figures(**field_rows(truth, simulated), resamples=400,
                                rng_seed=study, parts=("environments", "hardening"))
        [round_one] = figures["hardening"]
        interval = round_one["intervals"]["p_unhinted_change"]
        if interval:
            hits["p_unhinted_change"].append(interval[0] <= change <= interval[1])
            widths["p_unhinted_change"].append(interval[1] - interval[0])
        true = true_version_figures(truth, simulated)
        for v, row in enumerate(figures["environments"]):
            for name in ("peer_discrimination", "p_unhinted"):
                interval = row["intervals"][name]
                if interval:
                    hits[name].append(interval[0] <= true[name][v] <= interval[1])
                    widths[name].append(interval[1] - interval[0])
    for name, label in (("p_unhinted_change", "hardening: change of p_u (per study)"),
                        ("peer_discrimination", "version: peer discrimination (per version)"),
                        ("p_unhinted", "version: field p_u (per version)")):
        print(f"  {label:<46} {np.mean(hits[name]):.3f} of {len(hits[name])}, "
              f"mean width {np.mean(widths[name]):.3f}")


SHAPES = (
    # players, environments per author, domains, seeds: what the row is
    (5, 4, 2, 2, "small: 5 players, 4 env each, 2 domains (2 per cell), k=2"),
    (8, 6, 2, 4, "8 players, 6 env, 2 domains (3 per cell), k=4"),
    (9, 10, 2, 4, "full size: 9 players, 10 env, 2 domains (5 per cell), k=4"),
    (9, 10, 5, 4, "9 players, 10 env, 5 domains (2 per cell), k=4"),
    (9, 10, 10, 4, "9 players, 10 env, 10 domains (1 per cell), k=4"),
)


def coverage(studies: int) -> None:
    print(f"coverage of 95% intervals, {studies} simulated studies per shape "
          f"(share holding the truth, mean width; 'none' = no interval shown):")
    for players, per_author, domains, seeds, label in SHAPES:
        started = time.perf_counter()
        tally = field_coverage(planted_truth(players=players, domains=domains),
                               studies=studies, per_author=per_author, seeds=seeds,
                               resamples=400, seed=1)
        cells = ", ".join(f"{name.split('_')[0]} {tally[name]['coverage']:.3f} "
                          f"(w {tally[name]['width']:.3f}, none {tally[name]['missing']})"
                          for name in COVERED)
        print(f"  {label}: {cells} [{time.perf_counter() - started:.0f} s]")
    _per_version_and_hardening(max(studies // 4, 20))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--studies", type=int, default=200)
    args = parser.parse_args()
    timing(args.runs)
    if args.coverage:
        coverage(args.studies)


if __name__ == "__main__":
    main()
