"""Per-user rate limits: each user has a bucket per kind of request (`search`, `api`) holding
up to N requests, refilled at N a minute; a request takes one or is refused with the seconds
until one is back. The buckets live in the database, so every web process shares them."""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from duels.models import RateBucket

SEARCH = "search"
API = "api"
PACKAGE = "package"  # trainer-package downloads (each builds and zips a package)


class RateLimited(Exception):
    """Too many requests of one kind: the message says how long to wait."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def rate_per_minute(kind: str) -> int:
    return {SEARCH: settings.ENVDUELS_SEARCH_RATE_PER_MINUTE,
            API: settings.ENVDUELS_API_RATE_PER_MINUTE,
            PACKAGE: settings.ENVDUELS_PACKAGE_RATE_PER_MINUTE}[kind]


def rate_take(*, user: AbstractBaseUser, kind: str) -> None:
    """Take one request of `kind` from the user's bucket; raise RateLimited when it is empty."""
    size = rate_per_minute(kind)
    now = time.time()
    try:
        wait = _take(user, kind, size, now)
    except IntegrityError:  # another request made the bucket at the same moment
        wait = _take(user, kind, size, now)
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        what = {SEARCH: "searches", API: "API requests", PACKAGE: "package downloads"}[kind]
        raise RateLimited(
            f"Too many {what}: at most {size} a minute per user "
            f"(ENVDUELS_{kind.upper()}_RATE_PER_MINUTE). Try again in {seconds} s.",
            retry_after=seconds,
        )


def _take(user: AbstractBaseUser, kind: str, size: int, now: float) -> float | None:
    """None when a request was taken, else the seconds until the bucket holds one."""
    with transaction.atomic():
        bucket = RateBucket.objects.select_for_update().filter(user=user, kind=kind).first()
        if bucket is None:
            RateBucket.objects.create(user=user, kind=kind, tokens=size - 1, updated_at=now)
            return None
        elapsed = max(now - bucket.updated_at, 0.0)
        tokens = min(float(size), bucket.tokens + elapsed * size / 60)
        taken = tokens >= 1
        RateBucket.objects.filter(pk=bucket.pk).update(
            tokens=tokens - 1 if taken else tokens, updated_at=now)
        return None if taken else (1 - tokens) * 60 / size
