"""Scripted environment families, setter styles and solver skills behind the built-in players.

Each family module offers `generate(difficulty=, rng=)` (environment source + hint), `recognises`
(is this reset text mine?) and `act` (a solver's move, from the chat text only).
"""

from __future__ import annotations

from types import ModuleType

from duels.players.scripted import cipher, lights, maze, sequence, trading, vault
from duels.players.scripted.common import SKILLS, GeneratedEnvironment, SolverView

FAMILIES: dict[str, ModuleType] = {
    module.NAME: module for module in (vault, sequence, maze, cipher, lights, trading)
}

__all__ = ["FAMILIES", "SKILLS", "GeneratedEnvironment", "SolverView"]
