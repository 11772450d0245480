"""Simulated studies with planted truths: a field where every player writes environments in
every domain and plays every version on the same seeds in both conditions.

Every player has a solver ability θ and, as an author, a craft λ (how sharply its environments
separate strong from weak solvers), a difficulty offset and a hint skill. An environment by
author a in domain d has difficulty b ~ N(μ_d + offset_a, 0.8²) and hint effect
h ~ N(hint_a, 0.5²); each of its seeds has an effect ε ~ N(0, 0.7²) shared by every solver and
both conditions; a solver passes with σ(λ_a·(θ − b) + ε + h·hinted). A hardening round draws a
revision of each environment with the difficulty raised by `harden_shift`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from duels.studies.figures import FieldModel, FieldPlay, FieldVersion

DIFFICULTY_SD = 0.8
HINT_SD = 0.5
SEED_SD = 0.7


@dataclass(frozen=True)
class FieldTruth:
    """The planted players and domains."""

    theta: np.ndarray  # per player: solver ability
    craft: np.ndarray  # per player: slope λ of the environments it writes
    offset: np.ndarray  # per player: difficulty offset of its environments
    hint: np.ndarray  # per player: mean hint effect of its environments
    domain_mean: np.ndarray  # per domain

    @property
    def names(self) -> list[str]:
        return [f"p{i}" for i in range(len(self.theta))]


@dataclass(frozen=True)
class SimulatedField:
    """One simulated study's outcomes as arrays: (versions, solvers, seeds, condition)."""

    outcomes: np.ndarray  # bool (V, S, K, 2): condition 0 unhinted, 1 hinted
    author: np.ndarray  # (V,) author index
    domain: np.ndarray  # (V,) domain index
    slot: np.ndarray  # (V,) slot number
    revision: np.ndarray  # (V,)
    difficulty: np.ndarray  # (V,) the drawn difficulty b


def planted_truth(*, players: int = 8, domains: int = 2) -> FieldTruth:
    """Evenly spread abilities and crafts, so that the order of solvers and of designers is
    known: p{n−1} is the strongest solver, p0 the sharpest designer."""
    return FieldTruth(
        theta=np.linspace(-1.5, 1.5, players),
        craft=np.linspace(2.0, 0.4, players),
        offset=np.linspace(-0.3, 0.3, players)[::-1],
        hint=np.linspace(0.8, 2.0, players),
        domain_mean=np.linspace(-0.4, 0.4, domains),
    )


def simulate_field(truth: FieldTruth, rng: np.random.Generator, *, per_author: int,
                   seeds: int, harden_rounds: int = 0,
                   harden_shift: float = 0.8) -> SimulatedField:
    """Draw the environments (each author spreads its slots evenly over the domains), their
    revisions, seed effects and every outcome."""
    players, domains = len(truth.theta), len(truth.domain_mean)
    author = np.repeat(np.arange(players), per_author)
    domain = np.tile(np.arange(per_author) % domains, players)
    slots = len(author)
    difficulty = (truth.domain_mean[domain] + truth.offset[author]
                  + DIFFICULTY_SD * rng.standard_normal(slots))
    hint = truth.hint[author] + HINT_SD * rng.standard_normal(slots)
    rounds = harden_rounds + 1
    difficulty = np.concatenate([difficulty + r * harden_shift for r in range(rounds)])
    hint = np.tile(hint, rounds)
    author, domain = np.tile(author, rounds), np.tile(domain, rounds)
    seed_effect = SEED_SD * rng.standard_normal((len(author), seeds))
    eta = (truth.craft[author][:, None] * (truth.theta[None, :] - difficulty[:, None]))
    logit = eta[:, :, None, None] + seed_effect[:, None, :, None] + (
        np.array([0.0, 1.0])[None, None, None, :] * hint[:, None, None, None])
    outcomes = rng.random(logit.shape) < expit(logit)
    return SimulatedField(outcomes=outcomes, author=author, domain=domain,
                          slot=np.tile(np.arange(slots), rounds),
                          revision=np.repeat(np.arange(rounds), slots), difficulty=difficulty)


def field_rows(truth: FieldTruth, field: SimulatedField) -> dict:
    """The simulated study as field_figures' keyword arguments."""
    names = truth.names
    last = field.revision.max(initial=0)
    versions = []
    for v in range(len(field.author)):
        slot = f"{names[field.author[v]]}/env_{field.slot[v] + 1:03d}"
        suffix = f"/harden_{field.revision[v]:02d}" if field.revision[v] else ""
        parent = (f"v{v - np.sum(field.revision == 0)}" if field.revision[v] else None)
        versions.append(FieldVersion(
            uuid=f"v{v}", id=slot + suffix, version=slot.split("/")[1] + suffix, slot=slot,
            revision=int(field.revision[v]), parent=parent, author=names[field.author[v]],
            domain=f"domain-{field.domain[v]}", final=bool(field.revision[v] == last)))
    v, s, k, h = np.nonzero(np.ones(field.outcomes.shape, dtype=bool))
    passed = field.outcomes.ravel()
    plays = [FieldPlay(version=f"v{a}", solver=names[b], seed=int(c), hinted=bool(d),
                       success=bool(e))
             for a, b, c, d, e in zip(v.tolist(), s.tolist(), k.tolist(), h.tolist(),
                                      passed.tolist(), strict=True)]
    return {"versions": versions, "plays": plays,
            "models": [FieldModel(name) for name in names]}


# Fixed draws for the truths (Monte Carlo over an author's environments and their seeds).
_DRAWS = np.random.default_rng(2024).standard_normal((3, 40_000))


def true_figures(truth: FieldTruth) -> dict[str, np.ndarray]:
    """Each player's true canonical solve, hint gain (on others' environments) and design:
    their expectations over the environments the authors would write, when every author
    writes as many environments in every domain."""
    players = len(truth.theta)
    z_b, z_h, z_seed = _DRAWS
    # (author, domain, draw) → difficulty, hint effect, seed effect
    difficulty = (truth.domain_mean[None, :, None] + truth.offset[:, None, None]
                  + DIFFICULTY_SD * z_b[None, None, :])
    hint = truth.hint[:, None, None] + HINT_SD * z_h[None, None, :]
    seed = SEED_SD * z_seed[None, None, :]
    # (solver, author, domain, draw)
    eta = (truth.craft[None, :, None, None]
           * (truth.theta[:, None, None, None] - difficulty[None]) + seed[None])
    unhinted, hinted = expit(eta), expit(eta + hint[None])
    others = ~np.eye(players, dtype=bool)
    solve_cells = unhinted.mean(axis=-1)  # (solver, author, domain)
    gain_cells = (hinted - unhinted).mean(axis=-1)
    canonical = np.array([solve_cells[m][others[m]].mean(axis=0).mean() for m in range(players)])
    hint_gain = np.array([gain_cells[m][others[m]].mean() for m in range(players)])
    # Peer discrimination of one seed: E[X(n − X)] / ⌊n²/4⌋ with X the peers passing.
    design = np.empty(players)
    for a in range(players):
        p = unhinted[others[a], a]  # (peers, domain, draw)
        n = p.shape[0]
        total = p.sum(axis=0)
        expected = n * total - (p * (1 - p)).sum(axis=0) - total ** 2
        design[a] = (expected / (n * n // 4)).mean(axis=-1).mean()
    return {"canonical_autonomous_solve": canonical, "hint_gain": hint_gain, "design": design}


COVERED = ("canonical_autonomous_solve", "design", "hint_gain")


def field_coverage(truth: FieldTruth, *, studies: int, per_author: int, seeds: int,
                   resamples: int = 200, seed: int = 0) -> dict[str, dict]:
    """Simulate `studies` studies and count, per figure of COVERED, how often each player's
    95% interval holds its true value: {"hits", "intervals", "missing", "width"}."""
    from duels.studies.figures import field_figures

    true = true_figures(truth)
    tally = {name: {"hits": 0, "intervals": 0, "missing": 0, "width": 0.0} for name in COVERED}
    for study in range(studies):
        simulated = simulate_field(truth, np.random.default_rng([seed, study]),
                                   per_author=per_author, seeds=seeds)
        figures = field_figures(**field_rows(truth, simulated), resamples=resamples,
                                rng_seed=study, parts=("models",))
        for row in figures["models"]:
            player = truth.names.index(row["model"])
            for name in COVERED:
                interval = row["intervals"][name]
                count = tally[name]
                if interval is None:
                    count["missing"] += 1
                    continue
                count["intervals"] += 1
                count["hits"] += interval[0] <= true[name][player] <= interval[1]
                count["width"] += interval[1] - interval[0]
    for count in tally.values():
        count["coverage"] = count["hits"] / max(count["intervals"], 1)
        count["width"] = count["width"] / max(count["intervals"], 1)
    return tally


def _peer_rates(truth: FieldTruth, author: int, difficulty: np.ndarray) -> np.ndarray:
    """(peers, ..., draws) unhinted pass probabilities of the author's peers at `difficulty`
    (any shape), over the fixed seed-effect draws."""
    peers = np.delete(np.arange(len(truth.theta)), author)
    seed = SEED_SD * _DRAWS[2]
    eta = truth.craft[author] * (truth.theta[peers].reshape(-1, *[1] * difficulty.ndim)
                                 - difficulty[None])
    return expit(eta[..., None] + seed)


def true_version_figures(truth: FieldTruth, field: SimulatedField) -> dict[str, np.ndarray]:
    """Each simulated version's true field unhinted pass rate and peer discrimination: their
    expectations over seeds, given the version's drawn difficulty."""
    p_unhinted, discrimination = np.empty(len(field.author)), np.empty(len(field.author))
    for v, (author, difficulty) in enumerate(zip(field.author, field.difficulty,
                                                 strict=True)):
        p = _peer_rates(truth, author, np.array(difficulty))
        n, total = p.shape[0], p.sum(axis=0)
        p_unhinted[v] = p.mean()
        discrimination[v] = ((n * total - (p * (1 - p)).sum(axis=0) - total ** 2)
                             / (n * n // 4)).mean()
    return {"p_unhinted": p_unhinted, "peer_discrimination": discrimination}


def true_hardening_change(truth: FieldTruth, *, shift: float) -> float:
    """The true domain-balanced change of the field's unhinted pass rate when every
    environment is revised `shift` harder, over the environments the authors would write
    (each drawn difficulty paired with one seed effect)."""
    players, domains = len(truth.theta), len(truth.domain_mean)
    z_b, _, z_seed = _DRAWS
    changes = np.empty((players, domains))
    for author in range(players):
        peers = np.delete(np.arange(players), author)
        for domain in range(domains):
            b = truth.domain_mean[domain] + truth.offset[author] + DIFFICULTY_SD * z_b
            eta = truth.craft[author] * (truth.theta[peers][:, None] - b[None]) + (
                SEED_SD * z_seed[None])
            changes[author, domain] = (expit(eta - truth.craft[author] * shift).mean()
                                       - expit(eta).mean())
    return float(changes.mean(axis=0).mean())
