from __future__ import annotations

import json

from duels.analytics.compute import analytics_compute
from duels.analytics.data import AnalyticsInput, DuelRecord, EnvironmentRecord, EpisodeRecord
from duels.analytics.public import DESIGN_KEYS, design_shape


def test_empty_input_gives_the_design_shape_with_nulls():
    result = analytics_compute(AnalyticsInput())
    shape = design_shape(result)
    assert list(shape) == list(DESIGN_KEYS)
    assert shape["ratings"] == [] and shape["divergence"] is None and shape["transfer"] is None
    assert result["enough"] is False and result["figures"] == {}
    json.dumps(result, allow_nan=False)


def small_tournament() -> AnalyticsInput:
    names = ["ann", "ben", "cat"]
    duels, episodes, environments = [], [], []
    key = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            key += 1
            env_a, env_b = f"{key}a", f"{key}b"
            environments += [EnvironmentRecord(env_a, "A", a, True, "x = 1\ny = 2\n"),
                             EnvironmentRecord(env_b, "B", b, True, "z = [1]\n")]
            # The earlier-listed player always sets the better environment.
            duels.append(DuelRecord(key, f"duel-{key}", a, b, env_a, env_b, False))
            for seed in range(2):
                episodes += [EpisodeRecord(key, env_a, b, False, seed, False),
                             EpisodeRecord(key, env_a, b, True, seed, True),
                             EpisodeRecord(key, env_b, a, False, seed, True),
                             EpisodeRecord(key, env_b, a, True, seed, True)]
    return AnalyticsInput(tuple(names), tuple(duels), tuple(episodes), tuple(environments))


def test_small_tournament_fills_every_design_key_and_figure():
    result = analytics_compute(small_tournament())
    json.dumps(result, allow_nan=False)
    assert [row["player"] for row in result["ratings"]] == ["ann", "ben", "cat"]
    assert set(result["ratings"][0]) == {"player", "rating", "low", "high", "rank", "duels"}
    assert {row["player"]: row["setter_score"] for row in result["setters"]} == {
        "ann": 1.0, "ben": 0.5, "cat": 0.0}
    assert result["transitivity"]["cyclic_triads"] == 0
    assert {"uuid", "author", "hint_gain", "low", "high", "flags"} <= set(
        result["environments"][0])
    assert set(result["figures"]) == {"ratings", "head-to-head-wins", "head-to-head-duels",
                                      "setter-solver", "hint-gain", "solve-author",
                                      "difficulty"}
    wins = result["figures"]["head-to-head-wins"]["table"]
    assert wins["columns"] == ["player", "ann", "ben", "cat"]
    assert wins["rows"][0] == ["ann", None, 1.0, 1.0]


def test_a_forfeited_side_scores_zero_and_loses():
    data = small_tournament()
    forfeit = data.duels[0]._replace(env_a=None, forfeit_a=True)
    result = analytics_compute(AnalyticsInput(data.players, (forfeit, *data.duels[1:]),
                                              data.episodes, data.environments))
    ann = next(row for row in result["setters"] if row["player"] == "ann")
    assert ann["setter_score"] == 0.5
    assert ann["against"]["ben"]["setter_score"] == 0.0
