"""The study's 95% intervals cover their planted truths 93–97% of the time.

200 simulated studies of 8 players, each writing 10 environments over two domains, played on
4 seeds in both conditions (tests/helpers/planted_field.py): 1,600 intervals per figure, so a
method that covers 0.92 (the percentile bootstrap of design did) fails the floor, and one that
covers 0.98 the ceiling.
"""

from __future__ import annotations

from tests.helpers.planted_field import COVERED, field_coverage, planted_truth

FLOOR, CEILING = 0.93, 0.97


def test_canonical_solve_design_and_hint_gain_cover_in_200_simulated_studies():
    tally = field_coverage(planted_truth(players=8, domains=2), studies=200, per_author=10,
                           seeds=4, resamples=200, seed=44)
    for name in COVERED:
        count = tally[name]
        assert count["intervals"] + count["missing"] == 1600, name
        assert count["missing"] == 0, name
        assert FLOOR <= count["coverage"] <= CEILING, (name, count)
