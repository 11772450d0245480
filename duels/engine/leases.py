"""Leases: which worker owns a running episode or an authoring duel, and for how long.

A worker claims work with one conditional UPDATE (pending, or running with an expired lease) that
matches exactly one row for exactly one worker, on SQLite and PostgreSQL alike. While it works it
renews the lease (per step, and from a heartbeat thread during long model calls). A worker that
dies stops renewing; once the lease expires any other worker may claim the work and resume it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import (
    Case,
    DateTimeField,
    F,
    Model,
    PositiveIntegerField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.utils import timezone

from duels.engine.owners import episodes_of_stopped_owners
from duels.models import Duel, EndReason, Episode, Status

logger = logging.getLogger(__name__)

_identity = {"pid": None, "value": ""}
_identity_lock = threading.Lock()


class LeaseLost(Exception):
    """Another worker took this work over (our lease expired); stop without writing more."""


def lease_seconds() -> int:
    return int(getattr(settings, "ENVDUELS_LEASE_SECONDS", 30))


def lease_deadline() -> datetime:
    return timezone.now() + timedelta(seconds=lease_seconds())


def worker_identity() -> str:
    """Return this process's lease owner name (host, pid and a random part; new after fork)."""
    with _identity_lock:
        if _identity["pid"] != os.getpid():
            _identity["pid"] = os.getpid()
            _identity["value"] = f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        return _identity["value"]


def claimable_episodes(*, now: datetime | None = None) -> Q:
    """Episodes a worker may claim: pending, or running under an expired lease."""
    now = now or timezone.now()
    return Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now)


def episode_claim(*, episode_id: int, owner: str) -> bool:
    """Claim one episode for `owner`; True for exactly one of any number of racing workers."""
    now = timezone.now()
    claimed = Episode.objects.filter(claimable_episodes(now=now), pk=episode_id).update(
        # Taking over a running episode is a resume; count it.
        resumes=Case(When(status=Status.RUNNING, then=F("resumes") + 1), default=F("resumes"),
                     output_field=PositiveIntegerField()),
        status=Status.RUNNING,
        lease_owner=owner,
        lease_expires_at=now + timedelta(seconds=lease_seconds()),
        started_at=Case(When(started_at__isnull=True, then=Value(now)), default=F("started_at"),
                        output_field=DateTimeField()),
    )
    return claimed == 1


def unheld_episodes(*, now: datetime) -> Q:
    """Open episodes no worker holds: pending, waiting out a fault's backoff (no owner), or
    running past their lease (their worker died or stopped)."""
    return (Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_owner="")
            | Q(status=Status.RUNNING, lease_expires_at__lt=now)
            | Q(status=Status.RUNNING, lease_expires_at__isnull=True))


def episodes_end_orphaned() -> int:
    """End, with a reason, every episode a failed or cancelled run (a duel, a study, an
    evaluation …) still owes and no worker holds; return how many.

    No worker claims work of a stopped run, so such an episode would otherwise stay open for
    ever. A run that stops ends its unheld episodes in the same transaction; a held one ends
    itself at its next step, or here, once its lease has run out, when its worker died first.
    """
    now = timezone.now()
    ended = 0
    for owner, stopped in episodes_of_stopped_owners():
        ended += Episode.objects.filter(stopped, unheld_episodes(now=now)).update(
            status=Status.CANCELLED, end_reason=EndReason.CANCELLED, finished_at=now,
            lease_owner="", lease_expires_at=None,
            error=(f"ended unfinished: its {owner.noun} failed or was cancelled, and no worker "
                   "held this episode to end it"))
    if ended:
        logger.warning("ended %d episode(s) left open by failed or cancelled runs", ended)
    return ended


def episodes_orphaned_remain() -> bool:
    """True while an episode of a failed or cancelled run is still open (held, or not yet)."""
    return any(Episode.objects.filter(stopped, status__in=(Status.PENDING, Status.RUNNING))
               .exists() for _owner, stopped in episodes_of_stopped_owners())


def claimable_authoring(*, now: datetime | None = None) -> Q:
    """Duels whose authoring may be claimed: pending, or authoring under an expired lease.

    A running duel keeps a lease only while it authors; the commit that creates its episodes
    clears the lease, so a running duel without a lease is past authoring.
    """
    now = now or timezone.now()
    return Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now)


def duel_claim_authoring(*, duel_id: int, owner: str) -> bool:
    """Claim a duel's authoring for `owner`; True for exactly one racing worker."""
    return lease_claim(rows=Duel.objects.filter(claimable_authoring(), pk=duel_id), owner=owner)


def lease_claim(*, rows: QuerySet, owner: str) -> bool:
    """Claim the one row `rows` matches (it says what is claimable) for `owner`: running, under
    a fresh lease, started now unless it had started. True for exactly one racing worker."""
    now = timezone.now()
    claimed = rows.update(
        status=Status.RUNNING,
        lease_owner=owner,
        lease_expires_at=now + timedelta(seconds=lease_seconds()),
        started_at=Case(When(started_at__isnull=True, then=Value(now)), default=F("started_at"),
                        output_field=DateTimeField()),
    )
    return claimed == 1


class Heartbeat:
    """One thread per process renewing the leases this process holds, every third of a lease.

    A lease is held on a row of any model with `status`, `lease_owner` and `lease_expires_at`
    (an episode, a duel's authoring, a study slot's authoring …)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[type[Model], dict[int, int]] = {}  # model -> {row id: holds}
        self._thread: threading.Thread | None = None
        self._pid: int | None = None

    @contextmanager
    def hold(self, *, episode_id: int | None = None, duel_id: int | None = None,
             leased: tuple[type[Model], int] | None = None) -> Iterator[None]:
        """Keep renewing the lease on this episode, duel or other `(model, id)` while the
        block runs."""
        if episode_id is not None:
            model, key = Episode, episode_id
        elif duel_id is not None:
            model, key = Duel, duel_id
        else:
            model, key = leased
        with self._lock:
            table = self._held.setdefault(model, {})
            table[key] = table.get(key, 0) + 1
            self._ensure_thread()
        try:
            yield
        finally:
            with self._lock:
                table[key] -= 1
                if not table[key]:
                    del table[key]

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            threading.Event().wait(max(0.5, lease_seconds() / 3))
            with self._lock:
                held = {model: list(rows) for model, rows in self._held.items() if rows}
            if not held:
                continue
            try:
                close_old_connections()
                self.renew(held=held)
            except Exception:
                logger.warning("lease heartbeat failed; retrying", exc_info=True)
                connection.close()

    @staticmethod
    def renew(*, held: dict[type[Model], list[int]]) -> None:
        owner, deadline = worker_identity(), lease_deadline()
        for model, ids in held.items():
            # A lease cleared by the work itself (authoring that ended) is not renewed.
            model.objects.filter(
                pk__in=ids, status=Status.RUNNING, lease_owner=owner,
                lease_expires_at__isnull=False,
            ).update(lease_expires_at=deadline)


heartbeat = Heartbeat()
