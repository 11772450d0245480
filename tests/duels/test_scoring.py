from __future__ import annotations

import pytest

from duels.scoring import duel_outcome, side_score


def test_hint_needed_and_sufficient_scores_one():
    score = side_score(unhinted={0: False, 1: False}, hinted={0: True, 1: True})
    assert (score.p_unhinted, score.p_hinted, score.hint_gain) == (0.0, 1.0, 1.0)
    assert score.setter_score == 1.0
    assert score.flips == 2


def test_trivial_and_impossible_environments_score_zero():
    trivial = side_score(unhinted={0: True, 1: True}, hinted={0: True, 1: True})
    impossible = side_score(unhinted={0: False, 1: False}, hinted={0: False, 1: False})
    assert trivial.setter_score == 0.0
    assert impossible.setter_score == 0.0
    assert trivial.flips == impossible.flips == 0


def test_partial_results_use_the_product_and_count_flips_per_seed():
    score = side_score(
        unhinted={0: True, 1: False, 2: False, 3: False},
        hinted={0: False, 1: True, 2: False, 3: True},
    )
    assert score.p_unhinted == 0.25
    assert score.p_hinted == 0.5
    assert score.hint_gain == 0.25
    assert score.setter_score == pytest.approx(0.5 * 0.75)
    assert score.flips == 2  # seeds 1 and 3; seed 0 passed unhinted only


def test_a_side_without_episodes_is_an_error():
    with pytest.raises(ValueError):
        side_score(unhinted={}, hinted={0: True})


@pytest.mark.parametrize(
    ("score_a", "score_b", "outcome"),
    [(0.5, 0.25, "a"), (0.0, 0.1, "b"), (0.3, 0.3, "draw"), (0.1 + 0.2, 0.3, "draw")],
)
def test_outcome_goes_to_the_higher_setter_score(score_a, score_b, outcome):
    assert duel_outcome(score_a=score_a, score_b=score_b) == outcome
