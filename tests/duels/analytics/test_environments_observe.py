from __future__ import annotations

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.environments import environment_gains
from duels.analytics.observe import observe_uplift
from duels.analytics.sides import Side


def episodes_for(uuid: str, unhinted: list[bool], hinted: list[bool]) -> list[EpisodeRecord]:
    rows = [EpisodeRecord(1, uuid, "solver", False, s, ok) for s, ok in enumerate(unhinted)]
    rows += [EpisodeRecord(1, uuid, "solver", True, s, ok) for s, ok in enumerate(hinted)]
    return rows


def test_gain_interval_flips_and_flags():
    environments = [
        EnvironmentRecord("needs-hint", "t", "a", True, "", ("go left",), "Start."),
        EnvironmentRecord("trivial", "t", "a", True, "", ("go left",), "Start."),
        EnvironmentRecord("impossible", "t", "b", True, "", ("go left",), "Start."),
        EnvironmentRecord("leaking", "t", "b", True, "", ("Press the red button twice",),
                          "Welcome! press the  red button twice to win."),
    ]
    episodes = (episodes_for("needs-hint", [False] * 4, [True, True, True, False])
                + episodes_for("trivial", [True] * 4, [True] * 4)
                + episodes_for("impossible", [False] * 4, [False] * 4)
                + episodes_for("leaking", [True] * 4, [True] * 4))
    rows = {row["uuid"]: row for row in environment_gains(environments=environments,
                                                          episodes=episodes)}
    assert rows["needs-hint"]["hint_gain"] == 0.75
    assert rows["needs-hint"]["flips"] == 3
    assert rows["needs-hint"]["low"] < 0.75 < rows["needs-hint"]["high"]
    assert rows["needs-hint"]["flags"] == []
    assert rows["trivial"]["flags"] == ["trivial"]
    assert rows["impossible"]["flags"] == ["impossible"]
    assert rows["leaking"]["flags"] == ["trivial", "leaking"]


def side(setter: str, score: float, observe: bool) -> Side:
    return Side(1, setter, "x", "e", True, 0.0, score, score, score, 0, observe)


def test_observe_uplift_compares_on_with_off_per_setter():
    sides = ([side("small", 0.8, True)] * 6 + [side("small", 0.2, False)] * 6
             + [side("only-off", 0.5, False)] * 3 + [side("only-on", 0.5, True)] * 2)
    rows = {row["player"]: row for row in observe_uplift(sides=sides)}
    assert set(rows) == {"small", "only-on"}
    assert abs(rows["small"]["uplift"] - 0.6) < 1e-9
    assert abs(rows["small"]["low"] - 0.6) < 1e-9 and abs(rows["small"]["high"] - 0.6) < 1e-9
    assert rows["only-on"]["off"] is None and rows["only-on"]["low"] is None
