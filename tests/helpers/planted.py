"""Simulated tournaments with planted truths, for coverage tests and benchmarks/coverage_bench.py.

Every player has a solver ability θ, a setter craft μ (the mean difficulty of the environments it
writes) and a hint skill g (the mean hint effect). An environment by author a has difficulty
b ~ N(μ_a, 1) and hint effect γ ~ N(g_a, 0.8); a solver passes with σ(θ − b + γ·hinted). The
truths are therefore known exactly, and so is every figure computed from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from duels.analytics.data import DuelRecord, EnvironmentRecord, EpisodeRecord
from duels.analytics.irt_report import to_scale

DIFFICULTY_SD = 1.0
HINT_SD = 0.8
# Fixed normal draws for expectations over an author's environments (Monte Carlo, 20,000 each).
_NORMALS = np.random.default_rng(12345).standard_normal((2, 20_000))


@dataclass(frozen=True)
class Planted:
    """Known truths and the episodes (and duels) simulated from them."""

    theta: np.ndarray  # per player
    craft: np.ndarray  # per player: mean difficulty of its environments
    hint_skill: np.ndarray  # per player: mean hint effect of its environments
    difficulty: np.ndarray  # per environment
    hint_effect: np.ndarray  # per environment
    author: np.ndarray  # per environment: its author's index
    episodes: list[EpisodeRecord]
    environments: list[EnvironmentRecord]
    duels: list[DuelRecord]

    @property
    def names(self) -> list[str]:
        return [player_name(i) for i in range(len(self.theta))]


def player_name(index: int) -> str:
    return f"p{index:02d}"


def planted_players(rng: np.random.Generator, players: int) -> tuple[np.ndarray, ...]:
    """θ ~ N(0, 1), craft μ ~ N(0, 0.8), hint skill g ~ N(1, 0.5) per player."""
    return rng.normal(0, 1, players), rng.normal(0, 0.8, players), rng.normal(1, 0.5, players)


def _environment(rng: np.random.Generator, craft: float, hint: float) -> tuple[float, float]:
    return rng.normal(craft, DIFFICULTY_SD), rng.normal(hint, HINT_SD)


def _play(rng, episodes, *, duel, env, solver, p_unhinted, p_hinted, attempts) -> None:
    for seed in range(attempts):
        episodes.append(EpisodeRecord(duel, env, solver, False, seed,
                                      bool(rng.random() < p_unhinted)))
        episodes.append(EpisodeRecord(duel, env, solver, True, seed,
                                      bool(rng.random() < p_hinted)))


def planted_cross_play(rng: np.random.Generator, *, players: int, per_author: int,
                       attempts: int, solvers_per_environment: int | None = None) -> Planted:
    """Each player writes `per_author` environments; each is played `attempts` times in both
    conditions by every other player, or by `solvers_per_environment` of them at random."""
    theta, craft, hint_skill = planted_players(rng, players)
    difficulty, hint_effect, author = [], [], []
    episodes: list[EpisodeRecord] = []
    environments: list[EnvironmentRecord] = []
    for a in range(players):
        others = [i for i in range(players) if i != a]
        for k in range(per_author):
            uuid = f"env-{a}-{k}"
            b, g = _environment(rng, craft[a], hint_skill[a])
            difficulty.append(b)
            hint_effect.append(g)
            author.append(a)
            environments.append(EnvironmentRecord(uuid, uuid, player_name(a), True, ""))
            count = solvers_per_environment or len(others)
            for i in rng.choice(others, size=min(count, len(others)), replace=False):
                _play(rng, episodes, duel=None, env=uuid, solver=player_name(int(i)),
                      p_unhinted=expit(theta[i] - b), p_hinted=expit(theta[i] - b + g),
                      attempts=attempts)
    return Planted(theta, craft, hint_skill, np.array(difficulty), np.array(hint_effect),
                   np.array(author), episodes, environments, [])


def planted_duels(rng: np.random.Generator, *, players: int, rounds: int,
                  attempts: int) -> Planted:
    """`rounds` rounds of random pairings; in each duel both sides write an environment and
    solve the other's `attempts` times in both conditions (seeds 0..k−1)."""
    theta, craft, hint_skill = planted_players(rng, players)
    difficulty, hint_effect, author = [], [], []
    episodes: list[EpisodeRecord] = []
    environments: list[EnvironmentRecord] = []
    duels: list[DuelRecord] = []
    for _ in range(rounds):
        order = rng.permutation(players)
        for a, b in zip(order[0::2], order[1::2], strict=False):
            key = len(duels)
            envs = {}
            for setter, solver in ((a, b), (b, a)):
                uuid = f"env-{key}-{setter}"
                envs[setter] = uuid
                d, g = _environment(rng, craft[setter], hint_skill[setter])
                difficulty.append(d)
                hint_effect.append(g)
                author.append(setter)
                environments.append(EnvironmentRecord(uuid, uuid, player_name(setter), True, ""))
                _play(rng, episodes, duel=key, env=uuid, solver=player_name(solver),
                      p_unhinted=expit(theta[solver] - d), p_hinted=expit(theta[solver] - d + g),
                      attempts=attempts)
            duels.append(DuelRecord(key, f"duel-{key}", player_name(a), player_name(b),
                                    envs[a], envs[b], False))
    return Planted(theta, craft, hint_skill, np.array(difficulty), np.array(hint_effect),
                   np.array(author), episodes, environments, duels)


def _environment_draws(planted: Planted) -> tuple[np.ndarray, np.ndarray]:
    """Difficulty and hint effect of 20,000 environments each player would write
    (players × 20,000 each): the generator of `_environment`, on fixed normal draws."""
    return (planted.craft[:, None] + DIFFICULTY_SD * _NORMALS[0][None, :],
            planted.hint_skill[:, None] + HINT_SD * _NORMALS[1][None, :])


def expected_rates(planted: Planted) -> tuple[np.ndarray, np.ndarray]:
    """Each player's true setter strength (expected setter score p_h·(1 − p_u) of its
    environments against an opponent drawn uniformly from the others) and true solver strength
    (expected unhinted pass rate on an environment of an opponent drawn likewise)."""
    players = len(planted.theta)
    setter = np.zeros(players)
    solver = np.zeros(players)
    b_draws, g_draws = _environment_draws(planted)
    # σ(θ_i − b) of solver i on each environment player a would write: [i, a, draw]. The setter
    # side reads it by column, the solver side by row.
    unhinted_all = expit(planted.theta[:, None, None] - b_draws[None, :, :])
    for a in range(players):
        others = [i for i in range(players) if i != a]
        unhinted = unhinted_all[others, a]
        hinted = expit(planted.theta[others][:, None] - b_draws[a] + g_draws[a])
        setter[a] = np.mean(hinted * (1 - unhinted))
        solver[a] = np.mean(unhinted_all[a, others])
    return setter, solver


def true_author_ratings(planted: Planted, *, field: Sequence[int], rated: Sequence[str],
                        written: bool = False) -> dict[str, float]:
    """The true Author rating of each `rated` author, by the formula of
    duels/analytics/irt_report.py on the planted θ, b and γ: the field setter score
    σ(θ_i − b + γ)·(1 − σ(θ_i − b)) averaged over the solvers `field` minus the author and over
    the author's environments, its logit centred over `rated`, on the rating scale.

    The environments are those the author would write (its propensity, a property of the
    player like θ: the estimand of the bootstrap over its environments), or with `written` the
    very environments it happened to write (a property of this tournament's environments).
    """
    b_draws, g_draws = _environment_draws(planted)
    logits = {}
    for name in rated:
        a = int(name[1:])
        others = [i for i in field if i != a]
        mine = planted.author == a
        b, g = ((planted.difficulty[mine], planted.hint_effect[mine]) if written
                else (b_draws[a], g_draws[a]))
        eta = planted.theta[others][:, None] - b[None, :]
        logits[name] = logit(np.mean(expit(eta + g[None, :]) * (1 - expit(eta))))
    centre = np.mean(list(logits.values()))
    return {name: float(to_scale(value - centre)) for name, value in logits.items()}
