"""Rank ranges on planted studies: how often two truly equal players share a rank range, and how
often clearly separated players are separated (docs/results.md, "Ranks and rank ranges").

The planted field (tests/helpers/planted_field.py) has two players, p2 and p3, equal in every
respect (ability, craft, difficulty offset, hint skill); the others are spread far apart: solver
abilities rise from p0 to p5, and authors write ever harder environments from p0 to p5 (p5's
defeat nearly every peer, so they part nobody: design near 0). True figures (Monte Carlo):
canonical solve 0.005, 0.05, 0.18, 0.18, 0.40, 0.69; design 0.75, 0.79, 0.56, 0.56, 0.27, 0.01.
"""

from __future__ import annotations

import numpy as np

from duels.studies.figures import field_figures
from duels.studies.figures_ranks import ranges_overlap
from tests.helpers.planted_field import FieldTruth, field_rows, simulate_field

EQUAL = ("p2", "p3")
SEPARATED = {"canonical_autonomous_solve": (("p0", "p5"), ("p0", "p3"), ("p3", "p5")),
             "design": (("p0", "p5"), ("p3", "p5"), ("p1", "p4"))}
FIGURES = tuple(SEPARATED)


def equal_pair_truth() -> FieldTruth:
    """Six players; p2 and p3 identical; the others well apart."""
    return FieldTruth(
        theta=np.array([-2.5, -1.2, 0.0, 0.0, 1.2, 2.5]),
        craft=np.full(6, 1.5),
        offset=np.array([0.0, 0.8, 2.0, 2.0, 3.0, 5.0]),
        hint=np.full(6, 1.5),
        domain_mean=np.array([-0.3, 0.3]),
    )


def rank_range_simulation(*, studies: int, per_author: int = 6, seeds: int = 4,
                          resamples: int = 200, seed: int = 0) -> dict:
    """Per figure: the share of studies where the equal pair's rank ranges overlap, and the
    share where each separated pair's ranges are disjoint."""
    truth = equal_pair_truth()
    rng = np.random.default_rng(seed)
    shared = dict.fromkeys(FIGURES, 0)
    separated = {figure: dict.fromkeys(SEPARATED[figure], 0) for figure in FIGURES}
    for study in range(studies):
        rows = field_rows(truth, simulate_field(truth, rng, per_author=per_author,
                                                seeds=seeds))
        figures = field_figures(**rows, resamples=resamples, rng_seed=study,
                                parts=("models",))
        ranges = {row["model"]: row["rank_ranges"] for row in figures["models"]}
        for figure in FIGURES:
            first, second = (ranges[name][figure] for name in EQUAL)
            shared[figure] += bool(first and second and ranges_overlap(first, second))
            for pair in SEPARATED[figure]:
                one, other = (ranges[name][figure] for name in pair)
                separated[figure][pair] += bool(one and other
                                                and not ranges_overlap(one, other))
    return {"studies": studies,
            "equal_share": {figure: shared[figure] / studies for figure in FIGURES},
            "separated_share": {figure: {"-".join(pair): count / studies
                                         for pair, count in separated[figure].items()}
                                for figure in FIGURES}}
