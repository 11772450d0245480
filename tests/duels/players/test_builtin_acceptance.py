"""Acceptance of the built-in players, measured through the real sandbox (issue 4).

Every built-in setter writes one environment per family; every built-in solver plays each one
unhinted and hinted on seeds 0..7. From the measured pass rates we check that the solver skills are
graded, that hints help the solvers that read them (graded too) and that the random solver's gain
is noise.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

from duels.players import prompts
from duels.players.actions import action_from_text
from duels.players.builtin import BUILTIN_PLAYER_SPECS, BuiltinPlayer
from duels.players.scripted import FAMILIES
from tests.helpers.parts import need


def setter_prompt(**options):
    """The setter prompt as a duel sends it; the Python version only appears in its text."""
    return prompts.setter_messages(python_version="3.11.2", **options)

SEEDS = range(8)
SKILL_ORDER = ("random", "greedy", "search")


def sandbox_backends() -> list[str]:
    try:
        from sandbox_runner import available_backends
    except ImportError:
        return []
    return list(available_backends())


def play_episode(solver: BuiltinPlayer, sandbox, *, seed: int, hint: str | None) -> bool:
    """Play one episode the way the engine does: chat text in, last ACTION line out."""
    observation = sandbox.reset(seed=seed)
    history: list[tuple[str, str]] = []
    for _ in range(sandbox.max_steps):
        messages = prompts.solver_messages(hint=hint, history=history, observation=observation)
        reply = solver.complete(messages, max_tokens=256, temperature=0.0).text
        result = sandbox.step(action_from_text(reply).action)
        if result.done:
            return result.success
        history.append((observation, reply))
        observation = result.observation
    return False


def author(spec: dict, family: str) -> prompts.SetterAnswer:
    """Ask a built-in setter (pinned to `family`) for an environment, through the real prompt."""
    setter = BuiltinPlayer(
        name=spec["name"], model=spec["model"], params={**spec["params"], "family": family}
    )
    return prompts.parse_setter_answer(setter.complete(setter_prompt()).text)


def noise_bound(pass_rate: float, episodes: int) -> float:
    """Three standard errors of a difference of two independent pass rates, plus one episode.

    Under "the hint does nothing" both conditions share one pass rate p, so the difference of two
    rates over n episodes each has standard error sqrt(2 p (1 - p) / n); 3 SE keeps a chance
    failure below 0.3%, and 1/n absorbs the discreteness when p is near 0 or 1.
    """
    return 3 * math.sqrt(2 * pass_rate * (1 - pass_rate) / episodes) + 1 / episodes


@pytest.fixture(scope="module")
def measured():
    """(family, skill, hinted) -> [successes]; plus the per-environment table for the report."""
    backends = sandbox_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap or unshare) works here")
    from sandbox_runner import open_sandbox

    # Thousands of steps, each a round trip to the sandbox: bwrap's pipe answers quicker than
    # a container's (44 s against 17 s here); every backend runs the same guest.
    backend = "bwrap" if "bwrap" in backends else backends[0]

    outcomes: dict[tuple[str, str, bool], list[bool]] = defaultdict(list)
    rows = []
    solvers = [
        (BuiltinPlayer(name=s["name"], model=s["model"], params=s["params"]), s)
        for s in BUILTIN_PLAYER_SPECS
    ]
    for family in FAMILIES:
        for setter_spec in BUILTIN_PLAYER_SPECS:
            answer = author(setter_spec, family)
            with open_sandbox(answer.source, backend=backend) as sandbox:
                for solver, solver_spec in solvers:
                    skill = solver_spec["params"]["solver_skill"]
                    rates = []
                    for hint in (None, answer.hint):
                        wins = [play_episode(solver, sandbox, seed=s, hint=hint) for s in SEEDS]
                        outcomes[(family, skill, hint is not None)].extend(wins)
                        rates.append(sum(wins) / len(wins))
                    rows.append((answer.title, setter_spec["name"], solver_spec["name"], *rates))
    return outcomes, rows


def rate(outcomes, family: str, skill: str, hinted: bool) -> float:
    wins = outcomes[(family, skill, hinted)]
    return sum(wins) / len(wins)


def print_table(outcomes) -> None:
    skills = ("random", "greedy", "search", "hint_search")
    print("\nfamily      " + " ".join(f"{s:>13}" for s in skills) + "   (unhinted / hinted)")
    for family in FAMILIES:
        cells = [
            f"{rate(outcomes, family, s, False):.2f} / {rate(outcomes, family, s, True):.2f}"
            for s in skills
        ]
        print(f"{family:<11} " + " ".join(f"{cell:>13}" for cell in cells))


def pooled_gain(outcomes, skill: str) -> tuple[float, float]:
    """(hinted minus unhinted pass rate over all families, the noise bound for that difference)."""
    unhinted = [w for f in FAMILIES for w in outcomes[(f, skill, False)]]
    hinted = [w for f in FAMILIES for w in outcomes[(f, skill, True)]]
    p_unhinted, p_hinted = sum(unhinted) / len(unhinted), sum(hinted) / len(hinted)
    return p_hinted - p_unhinted, noise_bound((p_unhinted + p_hinted) / 2, len(unhinted))


@pytest.mark.slow
def test_built_in_players_measured_through_the_sandbox(measured):
    outcomes, _ = measured
    print_table(outcomes)

    # Solver skills are graded: strictly ordered by unhinted pass rate on at least 4 families.
    ordered = [
        family
        for family in FAMILIES
        if all(
            rate(outcomes, family, weaker, False) < rate(outcomes, family, stronger, False)
            for weaker, stronger in zip(SKILL_ORDER, SKILL_ORDER[1:], strict=False)
        )
    ]
    assert len(ordered) >= 4, f"skills strictly ordered on only {ordered}"

    # Hints raise the hint-reading solver's pass rate on every family.
    for family in FAMILIES:
        unhinted = rate(outcomes, family, "hint_search", False)
        hinted = rate(outcomes, family, "hint_search", True)
        assert hinted > unhinted, f"{family}: hint_search {unhinted:.2f} -> {hinted:.2f}"

    # Hint use is graded: pooled over families, every skill that reads hints gains clearly
    # (more than noise), and the searcher that notices the hint only sometimes gains less than
    # the one that always applies it.
    gains = {skill: pooled_gain(outcomes, skill) for skill in ("greedy", "search", "hint_search")}
    for skill, (gain, bound) in gains.items():
        assert gain > bound, (skill, gain, bound)
    assert gains["search"][0] < gains["hint_search"][0], gains

    # The random solver's gain is noise: within three standard errors, pooled and per family.
    pooled_unhinted = [w for f in FAMILIES for w in outcomes[(f, "random", False)]]
    pooled_hinted = [w for f in FAMILIES for w in outcomes[(f, "random", True)]]
    episodes = len(pooled_unhinted)
    p_unhinted, p_hinted = sum(pooled_unhinted) / episodes, sum(pooled_hinted) / episodes
    assert p_unhinted > 0, "the random solver never passed, so the noise check would be vacuous"
    bound = noise_bound((p_unhinted + p_hinted) / 2, episodes)
    assert abs(p_hinted - p_unhinted) <= bound, (p_unhinted, p_hinted, bound)
    for family in FAMILIES:
        unhinted, hinted = (rate(outcomes, family, "random", h) for h in (False, True))
        family_bound = noise_bound(
            (unhinted + hinted) / 2, len(outcomes[(family, "random", False)])
        )
        assert abs(hinted - unhinted) <= family_bound, (family, unhinted, hinted, family_bound)
