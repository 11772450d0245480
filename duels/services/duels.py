"""Writes for the duel pages: starting a duel within the per-user hourly limit, cancelling."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from duels.models import Duel, Player
from duels.selectors.duels import duel_recent_by_user


class DuelRateLimited(Exception):
    """The user has started as many duels this hour as the limit allows; the message says when
    they may start another."""


def duel_rate_limit_message(*, user: AbstractBaseUser) -> str | None:
    """None when `user` may start another duel now, else a message saying when they may."""
    limit = settings.ENVDUELS_DUEL_RATE_PER_HOUR
    recent = duel_recent_by_user(user=user, since=timezone.now() - dt.timedelta(hours=1))
    count = recent["count"]
    if count < limit:
        return None
    free_at = recent["oldest"] + dt.timedelta(hours=1)
    return (
        f"You have started {count} duels in the last hour; the limit is {limit} per hour. "
        f"You can start another at {free_at:%H:%M} UTC."
    )


def duel_start_for_user(
    *, user: AbstractBaseUser, a: Player, b: Player, attempts: int, observe: bool,
    cost_cap: float | None,
) -> Duel:
    """Create a duel started by `user`, or raise DuelRateLimited (or the engine's DuelError).

    The count and the creation happen in one transaction under a per-user lock, so concurrent
    requests cannot all pass the count before any of them creates: PostgreSQL locks the user's
    row (SELECT ... FOR UPDATE); SQLite opens every transaction IMMEDIATE (settings), which takes
    the database's write lock before the count.
    """
    # Imported here: the engine pulls in the sandbox and player stacks.
    from duels.engine.duels import duel_create

    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk"))
        message = duel_rate_limit_message(user=user)
        if message:
            raise DuelRateLimited(message)
        return duel_create(
            a=a, b=b, attempts=attempts, observe=observe, cost_cap=cost_cap, created_by=user
        )
