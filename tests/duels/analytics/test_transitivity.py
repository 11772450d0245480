from __future__ import annotations

import numpy as np
import pytest

from duels.analytics.ratings import points_matrix
from duels.analytics.transitivity import transitivity_fit


def points(games: list[tuple[int, int, float]], size: int) -> np.ndarray:
    return points_matrix(np.array([(a, b) for a, b, _ in games]),
                         np.array([s for _, _, s in games]), size)


def test_planted_three_cycle_gives_exactly_one_cyclic_triad():
    result = transitivity_fit(points([(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)], 3))
    assert result["cyclic_triads"] == 1
    assert result["zeta"] == pytest.approx(0.0)
    assert result["transitive_share"] == 0.0


def test_a_strict_order_is_fully_transitive():
    games = [(i, j, 1.0) for i in range(4) for j in range(i + 1, 4)]
    result = transitivity_fit(points(games, 4))
    assert result["cyclic_triads"] == 0
    assert result["zeta"] == 1.0
    assert result["transitive_share"] == 1.0
    assert result["decided_triples"] == 4


def test_cycle_inside_a_larger_tournament_uses_majorities():
    # 0 beats 1 twice and loses once: the majority still says 0 > 1.
    games = [(0, 1, 1.0), (0, 1, 1.0), (0, 1, 0.0), (1, 2, 1.0), (2, 0, 1.0),
             (3, 0, 1.0), (3, 1, 1.0), (3, 2, 1.0)]
    result = transitivity_fit(points(games, 4))
    assert result["cyclic_triads"] == 1
    assert result["transitive_share"] == pytest.approx(3 / 4)


def test_fewer_than_three_players_is_not_computable():
    assert transitivity_fit(points([(0, 1, 1.0)], 2)) is None
