"""The flywheel: a pool that collapses in its third round raises the diversity and difficulty
alarms; a healthy run raises none."""

from __future__ import annotations

import random

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.flywheel import compression_ratio, flywheel_compute

# Statement shapes that differ in structure once identifiers and literals are normalised.
SHAPES = [
    "self.grid = [[0] * {a} for _ in range({b})]",
    "for index in range({a}):\n            self.total += index * {b}",
    "while self.count < {a}:\n            self.count += {b}",
    "self.words = sorted(set('{w}'.split()))",
    "if self.level > {a} and self.mode == '{w}':\n            self.level -= {b}",
    "self.pairs = {{key: value for key, value in zip(range({a}), range({b}))}}",
    "try:\n            self.value = int('{w}')\n"
    "        except ValueError:\n            self.value = {a}",
    "self.stack.append(({a}, '{w}', [{b}]))",
    "with open('/dev/null') as handle:\n            self.read = handle.read({a})",
    "self.text = ''.join(reversed('{w}')) + str({a} ** {b})",
    "lambda_value = (lambda x, y: x % y)({a}, {b} or 1)",
    "assert isinstance(self.items, list), '{w}'",
]


def diverse_source(rng: random.Random) -> str:
    shapes = rng.sample(SHAPES, 6)
    body = "\n        ".join(shape.format(a=rng.randint(1, 9), b=rng.randint(1, 9),
                                        w=rng.choice(["north", "gate", "key"]))
                             for shape in shapes)
    return ("class Environment:\n    max_steps = 10\n\n    def reset(self, seed):\n"
            f"        {body}\n        return 'go'\n")


def repeated_source(number: int) -> str:
    """The same design with its literals changed."""
    return ("class Environment:\n    max_steps = 5\n\n    def reset(self, seed):\n"
            f"        self.target = {number} + seed\n        self.name = 'maze {number}'\n"
            "        return 'Say ' + str(self.target)\n\n    def step(self, action):\n"
            "        ok = action == str(self.target)\n"
            "        return {'observation': 'ok' if ok else 'no', 'done': ok, 'success': ok}\n")


def build(rounds: list[list[tuple[str, str, list[bool]]]]):
    """Environments and episodes from rounds of (author, source, per-run results)."""
    environments, episodes = [], []
    for number, designs in enumerate(rounds):
        for k, (author, source, results) in enumerate(designs):
            uuid = f"env-{number}-{k}"
            environments.append(EnvironmentRecord(
                uuid, f"design {number}.{k}", author, True, source, reset_text=f"task {uuid}",
                period=f"cup · round {number + 1}", created_at=f"2026-01-0{number + 1}T00:00:00"))
            episodes += [EpisodeRecord(None, uuid, "solver", bool(seed % 2), seed, result)
                         for seed, result in enumerate(results)]
    return environments, episodes


MIXED = [False, True, False, True]
TRIVIAL = [True, True, True, True]


def healthy_round(rng: random.Random) -> list:
    return [(f"setter-{k % 3}", diverse_source(rng), MIXED) for k in range(6)]


def test_a_collapsing_third_round_raises_the_diversity_and_difficulty_alarms():
    rng = random.Random(7)
    collapsed = [(f"setter-{k % 3}", repeated_source(k), TRIVIAL) for k in range(6)]
    environments, episodes = build([healthy_round(rng), healthy_round(rng), collapsed])
    result = flywheel_compute(environments=environments, episodes=episodes, irt_rows=[])
    periods = {row["period"]: row for row in result["periods"]}
    third = periods["cup · round 3"]
    assert third["top_cluster_share"] == 1.0 and third["distinct_clusters"] == 1
    assert third["all_solved"] == 1.0 and third["learnable"] == 0.0
    assert periods["cup · round 1"]["learnable"] == 1.0
    assert third["compression_ratio"] > periods["cup · round 2"]["compression_ratio"]
    kinds = {(alarm["kind"], alarm["period"]) for alarm in result["alarms"]}
    assert ("diversity", "cup · round 3") in kinds
    assert ("difficulty", "cup · round 3") in kinds
    assert not {kind for kind, period in kinds if period != "cup · round 3"}
    assert any(alarm["kind"] == "repeating" for alarm in result["alarms"])
    assert "50%" in result["alarm_text"]["diversity"]


def test_a_healthy_run_raises_no_alarm():
    rng = random.Random(11)
    environments, episodes = build([healthy_round(rng) for _ in range(3)])
    result = flywheel_compute(environments=environments, episodes=episodes, irt_rows=[])
    assert result["alarms"] == []
    assert [row["designs"] for row in result["periods"]] == [6, 6, 6]
    assert all(row["novelty"] > 0.3 for row in result["periods"][1:])
    assert result["periods"][0]["novelty"] is None  # nothing earlier to compare with
    assert len(result["setters"]) == 9


def test_compression_ratio_grows_with_repetition():
    assert compression_ratio([]) is None
    assert compression_ratio(["abc def " * 50]) > compression_ratio(["the quick brown fox"])


def test_no_designs_means_no_periods_and_no_alarm():
    result = flywheel_compute(environments=[], episodes=[], irt_rows=[])
    assert result["periods"] == [] and result["alarms"] == []
