"""The five findings: a verdict on any data, `supported` where the relation was planted."""

from __future__ import annotations

import random

import pytest

from duels.analytics.compute import analytics_compute
from duels.analytics.convergence import convergence_fit
from duels.analytics.data import (
    AnalyticsInput,
    DuelRecord,
    EnvironmentRecord,
    EpisodeRecord,
)
from duels.analytics.findings import (
    CONTRADICTED,
    NOT_ENOUGH,
    SUPPORTED,
    VERDICTS,
    finding_designs_converge,
    finding_gain_predicts_transfer,
)
from duels.analytics.transfer import transfer_fit

IDS = ["solver_not_setter", "small_models_set_harder", "transitive", "designs_converge",
       "gain_predicts_transfer"]
K = 4


def round_robin(players: dict[str, tuple[int, int]], *, rounds: int = 3,
                sizes: dict[str, float] | None = None) -> AnalyticsInput:
    """Every pair duels `rounds` times. Player = (solver skill, setter craft), both 0..K: the
    solver passes max(0, skill − craft) of the K seeds unhinted and all of them hinted."""
    names = list(players)
    duels, episodes, environments = [], [], []
    key = 0
    for _ in range(rounds):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                key += 1
                env_a, env_b = f"{key}-a", f"{key}-b"
                duels.append(DuelRecord(key, f"duel-{key}", a, b, env_a, env_b, False))
                for env, setter, solver in ((env_a, a, b), (env_b, b, a)):
                    # Distinct sources, so no design convergence is planted here.
                    environments.append(EnvironmentRecord(
                        env, f"{setter} {key}", setter, True, f"x{key} = {key}\n" * (key % 7)))
                    passes = max(0, players[solver][0] - players[setter][1])
                    for seed in range(K):
                        episodes.append(EpisodeRecord(key, env, solver, False, seed,
                                                      seed < passes))
                        episodes.append(EpisodeRecord(key, env, solver, True, seed, True))
    return AnalyticsInput(players=tuple(names), duels=tuple(duels), episodes=tuple(episodes),
                          environments=tuple(environments),
                          sizes=tuple((sizes or {}).items()))


def verdicts(data: AnalyticsInput) -> dict[str, dict]:
    result = analytics_compute(data, resamples=300)
    assert [finding["id"] for finding in result["findings"]] == IDS
    return {finding["id"]: finding for finding in result["findings"]}


def test_demo_like_data_gives_five_verdicts_with_every_field():
    players = {"a": (3, 2), "b": (2, 3), "c": (4, 1), "d": (1, 1), "e": (2, 2)}
    findings = verdicts(round_robin(players, rounds=2, sizes={"a": 70, "b": 8, "c": 400}))
    for finding in findings.values():
        assert {"id", "claim", "verdict", "figure", "interval", "n", "needs"} <= set(finding)
        assert finding["verdict"] in VERDICTS
        assert finding["claim"].endswith(".")
        assert set(finding["figure"]) == {"key", "label", "value", "n_of"}
        assert (finding["needs"] is None) == (finding["verdict"] != NOT_ENOUGH)
    # Three sized players are below the minimum of four.
    assert findings["small_models_set_harder"]["verdict"] == NOT_ENOUGH
    assert "parameters_b" in findings["small_models_set_harder"]["needs"]
    assert findings["small_models_set_harder"]["n"] == 3
    assert findings["gain_predicts_transfer"]["verdict"] == NOT_ENOUGH


def test_empty_data_gives_five_not_enough_data_verdicts():
    findings = verdicts(AnalyticsInput())
    assert {finding["verdict"] for finding in findings.values()} == {NOT_ENOUGH}


def test_planted_best_solver_who_sets_poorly_supports_finding_one():
    # s solves best and sets worst; t sets best and solves worst. Four round robins (16
    # environments per author): with three, the Author ratings' intervals, widened by t(11)/z
    # for twelve environments, let o reach t's lower bound by two points.
    players = {"s": (4, 0), "t": (0, 4), "m": (2, 2), "n": (1, 1), "o": (3, 1)}
    finding = verdicts(round_robin(players, rounds=4))["solver_not_setter"]
    assert finding["verdict"] == SUPPORTED
    assert finding["figure"]["value"] >= 0.95 and finding["n"] == 5


def test_planted_order_is_transitive_and_small_models_set_harder():
    # One strength per player for both roles: a strict order, top solver = top setter.
    players = {f"p{r}": (r, r) for r in range(6)}
    sizes = {f"p{r}": 1000.0 / (r + 1) for r in range(6)}  # the strongest is the smallest
    findings = verdicts(round_robin(players, sizes=sizes))
    assert findings["transitive"]["verdict"] == SUPPORTED
    assert findings["transitive"]["interval"]["low"] > 0.75
    assert "bootstrap" in findings["transitive"]["interval"]["method"]
    scale = findings["small_models_set_harder"]
    assert scale["verdict"] == SUPPORTED and scale["figure"]["value"] == -1.0
    # The two leaders are one step apart: the intervals cannot say which solves best.
    assert findings["solver_not_setter"]["verdict"] == NOT_ENOUGH


def test_a_clear_leader_in_both_roles_contradicts_finding_one():
    players = {**{f"p{r}": (r, r) for r in range(5)}, "ace": (8, 8)}
    finding = verdicts(round_robin(players))["solver_not_setter"]
    assert finding["verdict"] == CONTRADICTED


def test_larger_models_setting_harder_contradicts_finding_two():
    players = {f"p{r}": (r, r) for r in range(6)}
    sizes = {f"p{r}": 10.0 * (r + 1) for r in range(6)}
    assert verdicts(round_robin(players, sizes=sizes))["small_models_set_harder"][
        "verdict"] == CONTRADICTED


def _design(number: int, names: list[str]) -> str:
    """Source of design `number`: a fixed random sequence of statement shapes."""
    rng = random.Random(number)
    shapes = [
        "{0} = [{1} for {1} in range(10)]", "if {0} > {1}:\n    {0} -= 1",
        "while {0}:\n    {0} = {0} // 2", "{0}.append(({1}, 'x'))",
        "for {0} in {1}:\n    print({0})", "{0} = {{ {1}: 0 }}", "return {0} or {1}",
        "try:\n    {0}()\nexcept ValueError:\n    pass", "{0} += len({1}) * 3",
    ]
    lines = ["class Environment:", "    def step(self, action):"]
    for _ in range(30):
        first, second = rng.sample(names, 2)
        body = rng.choice(shapes).format(first, second)
        lines.extend("        " + line for line in body.splitlines())
    return "\n".join(lines) + "\n"


def test_authors_converging_on_the_same_designs_support_finding_four():
    # Four authors each write designs 0..4; design j looks the same whoever wrote it
    # (identifiers differ), while one author's designs differ from each other.
    environments = []
    for author in ("ann", "bob", "cy", "dee"):
        names = [f"{author}_{word}" for word in ("state", "moves", "goal", "seen", "board")]
        for design in range(5):
            environments.append(EnvironmentRecord(f"{author}-{design}", f"design {design}",
                                                  author, True, _design(design, names)))
    finding = finding_designs_converge({"convergence": convergence_fit(
        environments=environments)})
    assert finding["verdict"] == SUPPORTED
    assert finding["figure"]["value"] < 0.05 and finding["n"] == 20
    assert finding["interval"]["low"] is None and "permutation" in finding["interval"]["method"]


def test_few_environments_are_not_enough_to_judge_convergence():
    environments = [EnvironmentRecord(str(i), "t", f"author{i % 2}", True, _design(i, ["a", "b"]))
                    for i in range(4)]
    finding = finding_designs_converge({"convergence": convergence_fit(
        environments=environments)})
    assert finding["verdict"] == NOT_ENOUGH and "at least 20 designs" in finding["needs"]


@pytest.mark.parametrize(("sign", "verdict"), [(1, SUPPORTED), (-1, CONTRADICTED)])
def test_planted_transfer_relation_decides_finding_five(sign, verdict):
    rows = [{"hint_gain": gain / 12, "improvement": sign * gain / 20 + (gain % 3) / 100,
             "baseline": 0.2} for gain in range(12)]
    finding = finding_gain_predicts_transfer({"transfer": transfer_fit(rows=rows,
                                                                       resamples=500)})
    assert finding["verdict"] == verdict
    assert finding["n"] == 12 and "Spearman" in finding["interval"]["method"]
