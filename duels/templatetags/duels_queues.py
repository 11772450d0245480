"""Template filters for the annotation work and results pages."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    """`mapping[key]`, or None (answers are dicts keyed by question)."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def scale_values(top: int) -> range:
    """1..top for a scale question's choices."""
    return range(1, int(top) + 1)


@register.filter
def answer_text(value: Any) -> str:
    """An answer value as a person reads it."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "no label"
    return "—" if value is None else str(value)
