"""Each sentence explaining a duel side is chosen from that side's own scores, one case each."""

from __future__ import annotations

import pytest

from duels.models import Status
from duels.selectors.duel_explain import duel_side_sentence


def sentence(**overrides) -> str:
    side = {"duel_status": Status.FINISHED, "outcome": "a", "side": "a", "setter": "ace",
            "solver": "cautious", "forfeit": "", "p_unhinted": 0.0, "p_hinted": 1.0,
            "hint_gain": 1.0, "flips": 3}
    side.update(overrides)
    return duel_side_sentence(**side)


def test_won_needed_and_sufficient():
    assert sentence() == ("Needed and sufficient: every seed failed without the hint and passed "
                          "with it. ace won the duel.")


def test_lost_when_the_other_side_won():
    text = sentence(outcome="b", p_unhinted=1 / 3, p_hinted=2 / 3, hint_gain=1 / 3, flips=1)
    assert text == ("The hint helped: it turned 1 seed from failed to passed (hint gain +33 pp). "
                    "ace lost the duel.")


def test_draw():
    assert sentence(outcome="draw").endswith("The duel is a draw.")


def test_forfeited():
    assert sentence(forfeit="The environment did not validate.", p_unhinted=None,
                    p_hinted=None, hint_gain=None, flips=None) == (
        "ace forfeited this side, so its setter score is 0.")


def test_cancelled_says_so_whatever_the_scores():
    for scores in ({}, {"p_unhinted": None, "p_hinted": None, "hint_gain": None}):
        text = sentence(duel_status=Status.CANCELLED, outcome=None, **scores)
        assert text.startswith("The duel was cancelled before this side was scored")
        assert "Not scored yet" not in text


def test_failed_duel_has_no_result():
    assert "no result" in sentence(duel_status=Status.FAILED, outcome=None)


def test_unscored_while_running():
    assert sentence(duel_status=Status.RUNNING, outcome=None, p_hinted=None, hint_gain=None) == (
        "Not scored yet: cautious has not finished both conditions.")


def test_hint_changed_no_seed_with_no_flips_and_no_gain():
    text = sentence(outcome="b", p_unhinted=1 / 3, p_hinted=1 / 3, hint_gain=0.0, flips=0)
    assert text.startswith("The hint changed no seed: the same seeds passed with and without it "
                           "(hint gain 0 pp).")
    assert "turned" not in text and "Partly" not in text


def test_hint_flips_both_ways_with_no_gain():
    text = sentence(outcome="b", p_unhinted=1 / 3, p_hinted=1 / 3, hint_gain=0.0, flips=1)
    assert text.startswith("The hint turned 1 seed from failed to passed and as many the other way")


def test_hint_hurt():
    text = sentence(outcome="b", p_unhinted=2 / 3, p_hinted=1 / 3, hint_gain=-1 / 3, flips=0)
    assert text.startswith("The hint hurt: cautious passed fewer seeds with it than without "
                           "(hint gain −33 pp).")


@pytest.mark.parametrize(("p_unhinted", "p_hinted", "start"), [
    (1.0, 1.0, "cautious passed every seed without the hint: the environment is too easy"),
    (0.0, 0.0, "cautious failed every seed even with the hint: the environment is impossible"),
])
def test_score_zero_cases(p_unhinted, p_hinted, start):
    text = sentence(outcome="b", p_unhinted=p_unhinted, p_hinted=p_hinted, hint_gain=0.0, flips=0)
    assert text.startswith(start) and text.endswith("ace lost the duel.")


def test_unscored_with_every_play_done_says_when_it_is_scored():
    text = sentence(duel_status=Status.RUNNING, outcome=None, p_unhinted=None, p_hinted=None,
                    hint_gain=None, plays_done=True)
    assert text == ("Not scored yet: cautious has played every seed in both conditions; both "
                    "sides are scored together when the duel ends.")
