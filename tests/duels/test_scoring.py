from __future__ import annotations

from fractions import Fraction

import pytest

from duels.scoring import (
    SideResults,
    duel_outcome,
    duel_score,
    duel_score_from_episodes,
    episode_passed,
    field_score,
    side_score,
)


def played(unhinted, hinted) -> SideResults:
    return SideResults(unhinted=dict(enumerate(unhinted)), hinted=dict(enumerate(hinted)))


def test_hint_needed_and_sufficient_scores_one():
    score = side_score(results=played((False, False), (True, True)))
    assert (score.p_unhinted, score.p_hinted, score.hint_gain) == (0.0, 1.0, 1.0)
    assert score.setter_score == 1.0 and score.exact_setter_score == 1
    assert score.flips == 2
    assert score.played and not score.forfeited


def test_trivial_and_impossible_environments_score_zero():
    trivial = side_score(results=played((True, True), (True, True)))
    impossible = side_score(results=played((False, False), (False, False)))
    assert trivial.setter_score == impossible.setter_score == 0.0
    assert trivial.flips == impossible.flips == 0


def test_partial_results_use_the_product_and_count_flips_per_seed():
    score = side_score(results=played((True, False, False, False), (False, True, False, True)))
    assert score.p_unhinted == 0.25
    assert score.p_hinted == 0.5
    assert score.hint_gain == 0.25
    assert score.exact_setter_score == Fraction(3, 8)
    assert score.flips == 2  # seeds 1 and 3; seed 0 passed unhinted only


def test_a_forfeited_side_scores_zero_without_pass_rates():
    score = side_score(results=SideResults(forfeited=True, unhinted={0: True}, hinted={0: True}))
    assert score.forfeited and not score.played
    assert score.setter_score == 0.0
    assert score.p_unhinted is None and score.p_hinted is None and score.flips is None


def test_a_side_missing_a_condition_is_unplayed_and_the_duel_has_no_outcome():
    unplayed = SideResults(unhinted={}, hinted={0: True})
    score = duel_score(a=unplayed, b=played((False,), (True,)))
    assert score.a.scored is False and score.a.setter_score is None
    assert score.outcome is None and score.points_a is None


@pytest.mark.parametrize("attempts", range(1, 11))
def test_equal_scores_are_a_draw_for_every_k(attempts):
    # A: never solved unhinted, j of k hinted → s = j/k.  B: solved k − j of k unhinted, all
    # hinted → s = 1 · (1 − (k − j)/k) = j/k.  As floats the two differ in the last bit for
    # several k; as fractions they are equal, so the duel is a draw.
    seeds = range(attempts)
    for passes in range(1, attempts + 1):
        side_a = SideResults(unhinted=dict.fromkeys(seeds, False),
                             hinted={s: s < passes for s in seeds})
        side_b = SideResults(unhinted={s: s >= passes for s in seeds},
                             hinted=dict.fromkeys(seeds, True))
        score = duel_score(a=side_a, b=side_b)
        assert score.a.exact_setter_score == score.b.exact_setter_score == Fraction(passes,
                                                                                    attempts)
        assert score.outcome == "draw" and score.points_a == 0.5


def test_the_float_products_really_differ_at_k_three():
    # The case the exact comparison exists for: 1/3 · 1 against 1 · (1 − 2/3).
    assert (1 / 3) * (1 - 0.0) != 1.0 * (1 - 2 / 3)
    side_a = played((False, False, False), (True, False, False))
    side_b = played((True, True, False), (True, True, True))
    assert duel_score(a=side_a, b=side_b).outcome == "draw"


@pytest.mark.parametrize(
    ("score_a", "score_b", "outcome"),
    [(Fraction(1, 2), Fraction(1, 4), "a"), (0, Fraction(1, 10), "b"),
     (Fraction(3, 10), Fraction(3, 10), "draw")],
)
def test_outcome_goes_to_the_higher_exact_setter_score(score_a, score_b, outcome):
    assert duel_outcome(score_a=score_a, score_b=score_b) == outcome


def test_floats_are_refused_by_the_outcome_rule():
    with pytest.raises(TypeError):
        duel_outcome(score_a=0.1 + 0.2, score_b=Fraction(3, 10))


def test_only_a_finished_successful_episode_passes():
    assert episode_passed(status="finished", success=True)
    assert not episode_passed(status="finished", success=False)
    assert not episode_passed(status="failed", success=True)
    assert not episode_passed(status="cancelled", success=None)


def test_episodes_are_assigned_to_sides_by_environment():
    episodes = [("env-a", False, 0, False), ("env-a", True, 0, True),
                ("env-b", False, 0, True), ("env-b", True, 0, True),
                ("elsewhere", True, 0, True)]
    score = duel_score_from_episodes(forfeit_a=False, forfeit_b=False, env_a="env-a",
                                     env_b="env-b", episodes=episodes)
    assert (score.a.setter_score, score.b.setter_score, score.outcome) == (1.0, 0.0, "a")
    forfeited = duel_score_from_episodes(forfeit_a=True, forfeit_b=False, env_a="env-a",
                                         env_b="env-b", episodes=episodes)
    assert forfeited.outcome == "draw" and forfeited.a.forfeited


def test_a_field_score_is_the_mean_of_the_setter_scores_against_each_solver():
    needs_hint = played((False, False), (True, True))  # 1 against this solver
    half = played((False, True), (True, True))  # 1/2 against that one
    unplayed = SideResults()
    score = field_score(sides=[needs_hint, half, unplayed])
    assert score.solvers == 2 and score.exact_setter_score == Fraction(3, 4)
    assert (score.p_unhinted, score.p_hinted) == (0.25, 1.0)
    # The mean of the scores, not the score of the mean rates (that would be 1/2 · 1/2 here):
    other = field_score(sides=[played((True, True), (True, True)),
                               played((False, False), (False, False))])
    assert other.exact_setter_score == 0 and (other.p_unhinted, other.p_hinted) == (0.5, 0.5)
    assert field_score(sides=[needs_hint, SideResults(forfeited=True)]).setter_score == 0.0
    assert field_score(sides=[unplayed]).setter_score is None
