"""Rank ranges on planted studies (run by hand; not part of make test).

    .venv/bin/python benchmarks/rank_ranges_bench.py [--studies 200]

Simulates studies of six players in which p2 and p3 are equal in every respect and the others
are spread apart (tests/helpers/planted_ranks.py), at a few shapes (versions per author × seeds),
and prints, per ranked figure, the share of studies in which the equal pair's rank ranges
overlap (they share a rank) and the share in which each clearly separated pair's ranges are
disjoint. docs/results.md, "Ranks and rank ranges", quotes one run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.planted_ranks import rank_range_simulation  # noqa: E402

SHAPES = ((6, 4), (8, 8), (12, 8))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    args = parser.parse_args()
    for per_author, seeds in SHAPES:
        started = time.perf_counter()
        result = rank_range_simulation(studies=args.studies, per_author=per_author,
                                       seeds=seeds)
        print(f"{args.studies} studies, 6 players × {per_author} versions × {seeds} seeds "
              f"({time.perf_counter() - started:.0f} s)")
        for figure, share in result["equal_share"].items():
            parted = ", ".join(f"{pair} {value:.3f}"
                               for pair, value in result["separated_share"][figure].items())
            print(f"  {figure}: equal pair shares a rank range {share:.3f}; "
                  f"separated pairs parted: {parted}")


if __name__ == "__main__":
    main()
