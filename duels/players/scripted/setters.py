"""Setter styles: which family and difficulty a scripted setter picks, and its answer text."""

from __future__ import annotations

import hashlib
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


def domain_family(domain: str) -> str:
    """The family a scripted setter writes for a study's domain: the family of that name, or
    (for a domain no family is named after) one picked by the name, the same every time."""
    domain = " ".join(domain.split()).lower()
    if domain in FAMILIES:
        return domain
    names = sorted(FAMILIES)
    return names[int(hashlib.sha256(domain.encode()).hexdigest()[:8], 16) % len(names)]


# Hardening: the field passed unhinted more often than this, so the revision is harder.
HARDEN_ABOVE = 0.25
# The hint no longer carried the field this often: the revision is a level easier.
HINT_CARRIES = 0.5


def revise_design(*, digest: str) -> tuple[str, int] | None:
    """(family, level) of the revision a scripted setter writes from a field digest: harder
    when the field passed without the hint too often (two levels when most did), a level
    easier when even the hinted field mostly failed, else the same level anew; None when the
    digest names no scripted environment."""
    designs = _digest_designs([digest])
    if not designs:
        return None
    _, family, level, unhinted, hinted = designs[0]
    if unhinted > HARDEN_ABOVE:
        level += 2 if unhinted > 0.5 else 1
    elif hinted < HINT_CARRIES:
        level -= 1
    return family, clamp_difficulty(level)


def revise_environment(*, digest: str, rng: random.Random,
                       family: str | None = None) -> GeneratedEnvironment:
    """The revised environment a scripted setter writes from the field's digest of its
    version (`family` stands in when the digest names no scripted environment)."""
    revised = revise_design(digest=digest)
    chosen, level = revised or (family or sorted(FAMILIES)[0], NEEDS_HINT_LEVEL)
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
