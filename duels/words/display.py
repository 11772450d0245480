"""How an environment and an amount of money are named wherever a person reads them: pages,
published copies, replay files (the template filters of the same names call these)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# A published copy may leave costs out: while it renders, every amount the pages show reads
# "withheld" (one switch for every page and partial, see duels/publishing/).
_COSTS_SHOWN: ContextVar[bool] = ContextVar("costs_shown", default=True)


@contextmanager
def costs_withheld(withheld: bool = True) -> Iterator[None]:
    """Render amounts as "withheld" inside the block (when `withheld`)."""
    token = _COSTS_SHOWN.set(not withheld)
    try:
        yield
    finally:
        _COSTS_SHOWN.reset(token)


def env_name(environment) -> str:
    """An environment's distinct display name: "title · author · 1a2b3c" (short content hash).

    The author is named when the query loaded it (select_related), so a list never makes a
    query per row for it; the hash alone already tells environments with one title apart.
    """
    if environment is None or environment == "":
        return "—"
    parts = [environment.title]
    if "author" in environment._state.fields_cache:
        parts.append(environment.author.name if environment.author else "a person")
    if environment.content_hash:
        parts.append(environment.content_hash[:6])
    return " · ".join(parts)


def usd(value: float | None) -> str:
    if not _COSTS_SHOWN.get():
        return "withheld"
    if value is None or value == "":
        return "—"
    number = float(value)
    return f"${number:,.4f}" if 0 < number < 0.01 else f"${number:,.2f}"
