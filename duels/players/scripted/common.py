"""Shared pieces of the scripted environment families: the generated result and solver inputs."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

SKILLS = ("random", "greedy", "search", "hint_search")
# How often each skill notices the privileged hint in its system prompt (decided once per episode).
# What it then does with the hint is the family's business: greedy folds it into its one-step
# play (so it gains less where a plan is needed), search and hint_search plan with it.
HINT_ATTENTION = {"random": 0.0, "greedy": 1.0, "search": 0.5, "hint_search": 1.0}
MIN_DIFFICULTY, MAX_DIFFICULTY = 1, 5


@dataclass(frozen=True)
class GeneratedEnvironment:
    """One environment a scripted setter wrote: title (names the family), source and hint."""

    title: str
    source: str
    hint: str
    family: str
    difficulty: int = 1


@dataclass
class SolverView:
    """What a scripted solver may know: the chat text only, never the environment source.

    `observations[0]` is the reset text; `actions[i]` was answered by `observations[i + 1]`.
    `hint` is set only in the hinted condition and only when the solver noticed it this episode.
    """

    observations: list[str]
    actions: list[str]
    hint: str | None
    skill: str
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    @property
    def task(self) -> str:
        return self.observations[0]

    @property
    def latest(self) -> str:
        return self.observations[-1]


def render_source(template: str, params: dict) -> str:
    """Return environment source with its parameters baked in as a Python literal."""
    return template.replace("__PARAMS__", repr(params)).lstrip("\n")


def make_title(label: str, family: str, difficulty: int) -> str:
    """Return a title naming the family and level, e.g. 'Code vault (vault, level 3)'."""
    return f"{label} ({family}, level {difficulty})"


def family_environment(
    *, label: str, family: str, level: int, template: str, params: dict, hint: str
) -> GeneratedEnvironment:
    """Bake `params` into a family's source template and title it by family and level."""
    return GeneratedEnvironment(
        title=make_title(label, family, level),
        source=render_source(template, params),
        hint=hint,
        family=family,
        difficulty=level,
    )


_TITLE_FAMILY = re.compile(r"\((?P<family>[a-z_]+), level (?P<level>\d+)\)")


def parse_title(title: str) -> tuple[str, int] | None:
    """Return (family, level) from a scripted title, or None for any other title."""
    match = _TITLE_FAMILY.search(title)
    return (match.group("family"), int(match.group("level"))) if match else None


def clamp_difficulty(difficulty: int) -> int:
    return max(MIN_DIFFICULTY, min(MAX_DIFFICULTY, int(difficulty)))


def join_words(items: list[str], conjunction: str = "or") -> str:
    """Return 'a', 'a or b', 'a, b or c' — the way a person lists alternatives."""
    items = list(items)
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]
