"""Throttling repeated failed sign-ins, per account and per address.

After ENVDUELS_SIGNIN_FAILURES failures for one username within
ENVDUELS_SIGNIN_WINDOW_MINUTES (or four times as many from one address, whatever usernames it
tries), sign-in is refused with a message saying when it may be tried again, without checking
the password at all. The failures live in the database, so every web process shares them.
"""

from __future__ import annotations

import datetime as dt
import math

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone

from duels.models import SignInFailure

ADDRESS_FACTOR = 4  # an address may fail for a few accounts (a shared office) before it waits


def _window() -> dt.timedelta:
    return dt.timedelta(minutes=settings.ENVDUELS_SIGNIN_WINDOW_MINUTES)


def _key(username: str) -> str:
    return username.strip().lower()[:150]


def signin_blocked_message(*, username: str, address: str | None) -> str | None:
    """None when a sign-in may be tried now, else the message to show on the form."""
    recent = SignInFailure.objects.filter(created_at__gte=timezone.now() - _window())
    limit = settings.ENVDUELS_SIGNIN_FAILURES
    checks = []
    if _key(username):
        checks.append((recent.filter(username=_key(username)), limit, "for this account"))
    if address:
        checks.append((recent.filter(address=address), limit * ADDRESS_FACTOR, "from your address"))
    for failures, allowed, scope in checks:
        stats = failures.aggregate(count=Count("pk"), oldest=Min("created_at"))
        if stats["count"] >= allowed:
            retry_at = stats["oldest"] + _window()
            minutes = max(1, math.ceil((retry_at - timezone.now()).total_seconds() / 60))
            return (
                f"Too many failed sign-ins {scope} ({stats['count']} in the last "
                f"{settings.ENVDUELS_SIGNIN_WINDOW_MINUTES} minutes). Try again in about "
                f"{minutes} minute{'s' if minutes != 1 else ''}, at {retry_at:%H:%M} UTC."
            )
    return None


def signin_record_failure(*, username: str, address: str | None) -> None:
    """Remember one failed sign-in; forget those older than the window."""
    SignInFailure.objects.filter(created_at__lt=timezone.now() - _window()).delete()
    SignInFailure.objects.create(username=_key(username), address=address or None)


def signin_succeeded(*, username: str) -> None:
    """A correct password clears the account's failures (the address keeps its own)."""
    SignInFailure.objects.filter(username=_key(username)).delete()
