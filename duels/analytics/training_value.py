"""Training value of a design: how much an RL learner can expect to gain from it.

Only what EnvDuels measures goes in, each part scaled to [0, 1]:

    learnability         4·p_u·(1 − p_u)          measured unhinted pass rate (SFL's p(1−p))
    model learnability   4·q·(1 − q), q = σ(−b)   the joint model's pass rate for an average solver
    hint gain (low)      max(0, low of g's 95%)   Newcombe interval of g = p_h − p_u
    model hint gain      max(0, σ(−b + γ) − σ(−b)) the joint model's gain for an average solver

    training value = the mean of the four

A design counts only when it is valid and deterministic (its validation passed, reset texts
included), never voided after play (no copy of it replayed differently or showed its hint) and
solvable (its reference solution replayed to success, or a hinted run passed), and
it has episodes in both conditions; otherwise it has no value and a reason says why. Every
environment of a design gets the design's figures.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.designs import designs_group
from duels.analytics.proportions import newcombe_difference

COMPONENTS = ("learnability", "model_learnability", "gain_low", "model_gain")


def _sigmoid(value: float) -> float:
    return 1 / (1 + math.exp(-value))


def training_components(*, p_unhinted: float, gain_low: float, difficulty: float,
                        hint_effect: float) -> dict[str, float]:
    """The four parts of the training value, each in [0, 1], and their mean (`value`)."""
    model_pass = _sigmoid(-difficulty)
    parts = {
        "learnability": 4 * p_unhinted * (1 - p_unhinted),
        "model_learnability": 4 * model_pass * (1 - model_pass),
        "gain_low": min(1.0, max(0.0, gain_low)),
        "model_gain": max(0.0, _sigmoid(-difficulty + hint_effect) - model_pass),
    }
    return {**parts, "value": sum(parts.values()) / len(parts)}


def _weighted(rows: list[dict], key: str) -> float | None:
    """The episode-weighted mean of `key` over the joint model's rows of one design."""
    known = [(row[key], row["n"]) for row in rows if row.get(key) is not None and row["n"]]
    mass = sum(n for _, n in known)
    return sum(value * n for value, n in known) / mass if mass else None


def _why_not(members: list[EnvironmentRecord], solved: bool, both: bool) -> str:
    if any(env.voided for env in members):
        # One copy of the source caught on the path it played: every copy is that source.
        return "voided after play"
    if not any(env.validated for env in members):
        return "not validated here"
    if not any(env.valid for env in members):
        return "invalid"
    if not any(env.valid and env.deterministic for env in members):
        return "not deterministic"
    if not both:
        return "needs episodes in both conditions"
    if not solved:
        return "never solved: no reference solution replayed and no hinted run passed"
    return ""


def condition_tallies(episodes: Sequence[EpisodeRecord]) -> dict[str, list[int]]:
    """Environment uuid → [unhinted passes, unhinted runs, hinted passes, hinted runs]."""
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for episode in episodes:
        tally = tallies[episode.environment]
        offset = 2 if episode.hinted else 0
        tally[offset] += episode.success
        tally[offset + 1] += 1
    return tallies


def training_values(*, environments: Sequence[EnvironmentRecord],
                    episodes: Sequence[EpisodeRecord], irt_rows: Sequence[dict]) -> list[dict]:
    """One row per design with episodes: its figures, training value (or None) and reason."""
    tallies = condition_tallies(episodes)
    irt_by_uuid = {row["uuid"]: row for row in irt_rows}
    rows = []
    for design, members in designs_group(environments, source=lambda env: env.source).items():
        unhinted_pass = unhinted_n = hinted_pass = hinted_n = 0
        for env in members:
            a, b, c, d = tallies.get(env.uuid, (0, 0, 0, 0))
            unhinted_pass, unhinted_n = unhinted_pass + a, unhinted_n + b
            hinted_pass, hinted_n = hinted_pass + c, hinted_n + d
        if not unhinted_n and not hinted_n:
            continue
        model_rows = [irt_by_uuid[env.uuid] for env in members if env.uuid in irt_by_uuid]
        difficulty = _weighted(model_rows, "difficulty")
        hint_effect = _weighted(model_rows, "hint_effect")
        both = bool(unhinted_n and hinted_n) and difficulty is not None and hint_effect is not None
        solved = hinted_pass > 0 or any(env.reference_solved for env in members)
        reason = _why_not(members, solved, both)
        row = {
            "design": design,
            "environments": [env.uuid for env in members],
            "title": members[0].title,
            "authors": sorted({env.author for env in members if env.author}),
            "p_unhinted": unhinted_pass / unhinted_n if unhinted_n else None,
            "p_hinted": hinted_pass / hinted_n if hinted_n else None,
            "hint_gain": None, "gain_low": None, "gain_high": None,
            "difficulty": difficulty, "hint_effect": hint_effect,
            "episodes": unhinted_n + hinted_n,
            "value": None, "components": None, "reason": reason,
        }
        if unhinted_n and hinted_n:
            row["hint_gain"] = row["p_hinted"] - row["p_unhinted"]
            row["gain_low"], row["gain_high"] = newcombe_difference(
                hinted_pass, hinted_n, unhinted_pass, unhinted_n)
        if not reason:
            parts = training_components(p_unhinted=row["p_unhinted"], gain_low=row["gain_low"],
                                        difficulty=difficulty, hint_effect=hint_effect)
            row["value"] = parts.pop("value")
            row["components"] = parts
        rows.append(row)
    rows.sort(key=lambda row: (row["value"] is None, -(row["value"] or 0.0), row["design"]))
    return rows
