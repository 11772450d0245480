"""Counts in sentences: "1 episode", "5,001 steps"."""

from __future__ import annotations


def count_noun(count: int, singular: str, plural: str | None = None) -> str:
    """`count` with its noun in the right number, thousands separated."""
    noun = singular if count == 1 else (plural or f"{singular}s")
    return f"{count:,} {noun}"
