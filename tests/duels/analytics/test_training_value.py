"""Training value per design: the documented parts, who counts, and designs shared by sources."""

from __future__ import annotations

import math

import pytest

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.designs import content_hash as design_key
from duels.analytics.training_value import training_components, training_values


def env(uuid, source, *, validated=True, valid=True, deterministic=True, solved=True):
    return EnvironmentRecord(uuid, f"title {uuid}", "setter", valid, source,
                             validated=validated, deterministic=deterministic,
                             reference_solved=solved)


def played(uuid, unhinted, hinted):
    """Episodes with the given per-seed results in each condition."""
    return [EpisodeRecord(None, uuid, "solver", hinted_flag, seed, result)
            for hinted_flag, results in ((False, unhinted), (True, hinted))
            for seed, result in enumerate(results)]


def model_row(uuid, difficulty, hint_effect, n):
    return {"uuid": uuid, "difficulty": difficulty, "hint_effect": hint_effect, "n": n}


def test_components_follow_the_documented_formula():
    parts = training_components(p_unhinted=0.25, gain_low=0.3, difficulty=1.0, hint_effect=2.0)
    q = 1 / (1 + math.exp(1.0))
    assert parts["learnability"] == pytest.approx(4 * 0.25 * 0.75)
    assert parts["model_learnability"] == pytest.approx(4 * q * (1 - q))
    assert parts["gain_low"] == pytest.approx(0.3)
    assert parts["model_gain"] == pytest.approx(1 / (1 + math.exp(-1.0)) - q)
    assert parts["value"] == pytest.approx(sum(parts[k] for k in (
        "learnability", "model_learnability", "gain_low", "model_gain")) / 4)
    # A misleading hint and a gain interval below 0 add nothing; they never subtract.
    worst = training_components(p_unhinted=0.0, gain_low=-0.4, difficulty=5.0, hint_effect=-1.0)
    assert worst["gain_low"] == 0 and worst["model_gain"] == 0 and worst["learnability"] == 0


def test_a_hint_needing_design_outranks_a_trivial_one():
    environments = [env("hard", "A = 1\n"), env("easy", "B = 2\n")]
    episodes = played("hard", [False] * 6 + [True] * 2, [True] * 8) + played(
        "easy", [True] * 8, [True] * 8)
    rows = training_values(environments=environments, episodes=episodes, irt_rows=[
        model_row("hard", 1.0, 3.0, 16), model_row("easy", -3.0, 0.0, 16)])
    assert [row["environments"] for row in rows] == [["hard"], ["easy"]]
    hard, easy = rows
    assert hard["value"] > easy["value"]
    assert easy["components"]["learnability"] == 0 and easy["components"]["gain_low"] == 0
    assert hard["gain_low"] > 0 and hard["reason"] == ""


@pytest.mark.parametrize(("record", "reason"), [
    (env("x", "C = 3\n", validated=False), "not validated here"),
    (env("x", "C = 3\n", valid=False), "invalid"),
    (env("x", "C = 3\n", deterministic=False), "not deterministic"),
])
def test_only_valid_deterministic_designs_count(record, reason):
    rows = training_values(environments=[record], episodes=played("x", [False, True], [True] * 2),
                           irt_rows=[model_row("x", 0.0, 1.0, 4)])
    assert rows[0]["value"] is None and rows[0]["reason"] == reason


def test_a_design_never_solved_has_no_value_until_a_hinted_run_passes():
    record = env("x", "D = 4\n", solved=False)
    unsolved = training_values(environments=[record],
                               episodes=played("x", [False] * 2, [False] * 2),
                               irt_rows=[model_row("x", 2.0, 0.0, 4)])
    assert unsolved[0]["value"] is None and unsolved[0]["reason"].startswith("never solved")
    solved = training_values(environments=[record],
                             episodes=played("x", [False] * 2, [True, False]),
                             irt_rows=[model_row("x", 2.0, 1.0, 4)])
    assert solved[0]["value"] is not None


def test_environments_with_one_normalised_source_pool_into_one_design():
    assert design_key("x = 1   \r\ny = 2\r\n") == design_key("x = 1\ny = 2\n")
    assert design_key("x = 1\n") != design_key("x = 2\n")
    environments = [env("first", "E = 5  \n"), env("second", "E = 5\r\n")]
    episodes = played("first", [False, False], [True, True]) + played("second", [True, False],
                                                                      [True, True])
    rows = training_values(environments=environments, episodes=episodes, irt_rows=[
        model_row("first", 1.0, 2.0, 4), model_row("second", 0.0, 1.0, 12)])
    assert len(rows) == 1
    assert rows[0]["environments"] == ["first", "second"]
    assert rows[0]["p_unhinted"] == pytest.approx(1 / 4)
    assert rows[0]["difficulty"] == pytest.approx((1.0 * 4 + 0.0 * 12) / 16)
