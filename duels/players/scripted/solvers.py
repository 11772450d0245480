"""Solver skills: route a solver turn to the family whose reset text it recognises."""

from __future__ import annotations

import random
import re

from duels.players.scripted import FAMILIES
from duels.players.scripted.common import HINT_ATTENTION, SolverView


def solve(
    *, skill: str, observations: list[str], actions: list[str], hint: str | None,
    rng: random.Random, episode_rng: random.Random | None = None,
) -> tuple[str, str]:
    """Return (reasoning, action).

    Whether the solver notices the hint is drawn once per episode from `episode_rng` (an RNG
    seeded by the episode's opening messages, so every turn of one episode agrees) with the
    skill's HINT_ATTENTION; `random` never notices it.
    """
    attention = HINT_ATTENTION[skill]
    noticed = hint is not None and (episode_rng or rng).random() < attention
    view = SolverView(
        observations=observations or [""],
        actions=actions,
        hint=hint if noticed else None,
        skill=skill,
        rng=rng,
    )
    for family in FAMILIES.values():
        if family.recognises(view.task):
            return family.act(view)
    return _unknown(view)


def _unknown(view: SolverView) -> tuple[str, str]:
    """An environment no family knows (say, one a real model wrote): try the commands it shows."""
    examples = re.findall(r"`([^`\n]{1,60})`", view.task)
    if examples:
        return "Trying one of the commands the task mentions.", view.rng.choice(examples)
    return "I do not recognise this task.", "look"
