"""Writes for roles: adding people to and removing them from the operators group."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from duels.services.access import OPERATORS_GROUP


class RoleError(Exception):
    """A role change that cannot be made; the message says why."""


def _user(username: str):
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise RoleError(f"No account named {username!r} (manage.py createsuperuser or "
                        "/admin/ makes one).") from None


def operator_add(*, username: str) -> bool:
    """Put `username` in the operators group; False when they already were in it."""
    user = _user(username)
    group, _ = Group.objects.get_or_create(name=OPERATORS_GROUP)
    if user.groups.filter(pk=group.pk).exists():
        return False
    user.groups.add(group)
    return True


def operator_remove(*, username: str) -> bool:
    """Take `username` out of the operators group; False when they were not in it."""
    user = _user(username)
    removed = user.groups.filter(name=OPERATORS_GROUP).exists()
    user.groups.remove(*Group.objects.filter(name=OPERATORS_GROUP))
    return removed


def operator_list() -> list[str]:
    """Usernames that may start duels: staff and the operators group, sorted."""
    users = get_user_model().objects.filter(is_active=True)
    staff = users.filter(is_staff=True).values_list("username", flat=True)
    group = users.filter(groups__name=OPERATORS_GROUP).values_list("username", flat=True)
    return sorted(set(staff) | set(group))
