"""Setter styles: which family and difficulty a scripted setter picks, and its answer text."""

from __future__ import annotations

import random
import re

from duels.players.prompts import KIND_PREFIX, TITLE_PREFIX
from duels.players.scripted import FAMILIES
from duels.players.scripted.common import GeneratedEnvironment, clamp_difficulty, parse_title

SETTER_STYLES = ("safe", "overreach", "needs_hint", "observer")
NEEDS_HINT_LEVEL = 4  # every family: unhinted search fails, the hint-reader passes
OVERREACH_LEVELS = (4, 5, 5)  # mostly level 5, where even the hint is sometimes not enough

_RATE = {
    "unhinted": re.compile(r"Pass rate without hint: ([\d.]+)"),
    "hinted": re.compile(r"Pass rate with hint: ([\d.]+)"),
}


def _digest_designs(digests: list[str]) -> list[tuple[float, str, int, float, float]]:
    """Return (setter score, family, level, p_unhinted, p_hinted) for each readable digest."""
    designs = []
    for digest in digests:
        title = re.search(r"Environment: (.+)", digest)
        parsed = parse_title(title.group(1)) if title else None
        rates = {key: pattern.search(digest) for key, pattern in _RATE.items()}
        if not parsed or parsed[0] not in FAMILIES or not all(rates.values()):
            continue
        unhinted, hinted = (float(rates[key].group(1)) for key in ("unhinted", "hinted"))
        designs.append((hinted * (1 - unhinted), parsed[0], parsed[1], unhinted, hinted))
    return designs


def choose_design(
    *, style: str, digests: list[str], rng: random.Random, family: str | None = None
) -> tuple[str, int]:
    """Return (family, difficulty) for a style; `family` pins the family when given."""
    families = [family] if family in FAMILIES else sorted(FAMILIES)
    if style == "observer":
        designs = [d for d in _digest_designs(digests) if d[1] in families]
        if designs:
            # Copy the design that best separated hinted from unhinted, nudging its difficulty:
            # harder if solvers passed without the hint, easier if they failed even with it.
            _, best_family, level, unhinted, hinted = max(designs, key=lambda d: d[0])
            if unhinted > 0.25:
                level += 1
            elif hinted < 0.75:
                level -= 1
            return best_family, clamp_difficulty(level)
        style = "needs_hint"
    chosen = rng.choice(families)
    if style == "safe":
        return chosen, rng.choice([1, 2])
    if style == "overreach":
        return chosen, rng.choice(OVERREACH_LEVELS)
    return chosen, NEEDS_HINT_LEVEL


def write_environment(
    *, style: str, digests: list[str], rng: random.Random, family: str | None = None
) -> GeneratedEnvironment:
    """Return the environment a setter of this style writes for this prompt."""
    chosen, level = choose_design(style=style, digests=digests, rng=rng, family=family)
    return FAMILIES[chosen].generate(difficulty=level, rng=rng)


def answer_text(environment: GeneratedEnvironment, *, broken: bool = False) -> str:
    """Return the setter's chat answer; `broken` leaves out the hint block (to test repairs)."""
    parts = [
        f"{TITLE_PREFIX} {environment.title}",
        f"{KIND_PREFIX} {environment.family}",
        f"I wrote a {environment.family} environment at difficulty {environment.difficulty}.",
        f"```python\n{environment.source.rstrip()}\n```",
    ]
    if not broken:
        parts.append(f"```hint\n{environment.hint}\n```")
    return "\n\n".join(parts)
