"""Template filters that ask the access helpers, so pages show only what a person may do."""

from __future__ import annotations

from django import template

from duels.services.access import duel_can_start

register = template.Library()


@register.filter
def may_start_duels(user) -> bool:
    """`{% if user|may_start_duels %}`: staff and operators."""
    return duel_can_start(user=user)
