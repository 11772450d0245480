"""The per-player limit on completions in flight (`Player.max_concurrency`).

Scope: every worker of the installation. Two layers:

- a semaphore per player inside the process, so threads queue without polling;
- across processes, `max_concurrency` slots per player: on PostgreSQL, session advisory locks in
  the shared database, so workers on every machine share the limit; on SQLite (one machine),
  lock files taken with `flock` in `var/player-slots/`. Either way a worker that dies loses its
  slots with its database session or its process, so a crash never leaks one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db import connection

from duels.players.base import PlayerError

POLL_INTERVAL_S = 0.02
DEFAULT_WAIT_S = 3600.0

_semaphores: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_semaphores_lock = threading.Lock()


def slot_directory() -> Path:
    """Where the lock files live; one directory per installation."""
    configured = getattr(settings, "ENVDUELS_PLAYER_SLOT_DIR", None)
    return Path(configured) if configured else Path(settings.VAR_DIR) / "player-slots"


def _process_semaphore(key: str, limit: int) -> threading.BoundedSemaphore:
    with _semaphores_lock:
        semaphore = _semaphores.get((key, limit))
        if semaphore is None:
            semaphore = _semaphores[(key, limit)] = threading.BoundedSemaphore(limit)
        return semaphore


def _try_slot(directory: Path, key: str, limit: int) -> int | None:
    """Lock one free slot file of `key` and return its descriptor, or None when all are taken."""
    for index in range(limit):
        fd = os.open(directory / f"{key}.{index}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return fd
    return None


def _lock_namespace(key: str) -> int:
    """A signed 32-bit number naming `key`'s slots among the database's advisory locks."""
    return int.from_bytes(hashlib.sha256(f"envduels-slot:{key}".encode()).digest()[:4], "big",
                          signed=True)


def _try_database_slot(key: str, limit: int) -> int | None:
    """Take one free advisory lock of `key` (PostgreSQL) and return its index, or None."""
    namespace = _lock_namespace(key)
    with connection.cursor() as cursor:
        for index in range(limit):
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, index])
            if cursor.fetchone()[0]:
                return index
    return None


def _release_database_slot(key: str, index: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_lock_namespace(key), index])


@contextlib.contextmanager
def _database_slot(*, key: str, limit: int, deadline: float, wait_s: float) -> Iterator[None]:
    """Hold one of the player's slots shared by every machine on the database."""
    while (index := _try_database_slot(key, limit)) is None:
        if time.monotonic() >= deadline:
            raise PlayerError(
                f"no free concurrency slot for player {key} after {wait_s:g} s "
                "(workers on this or other machines hold them all)"
            )
        time.sleep(POLL_INTERVAL_S * 5)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # a lost connection has released it already
            _release_database_slot(key, index)


@contextlib.contextmanager
def concurrency_slot(*, key: str, limit: int, wait_s: float = DEFAULT_WAIT_S) -> Iterator[None]:
    """Hold one of `limit` slots for `key` (a player's uuid) while the block runs.

    Waits up to `wait_s` for a slot, then raises PlayerError.
    """
    limit = max(1, int(limit))
    deadline = time.monotonic() + wait_s
    semaphore = _process_semaphore(key, limit)
    if not semaphore.acquire(timeout=wait_s):
        raise PlayerError(f"no free concurrency slot for player {key} after {wait_s:g} s")
    fd: int | None = None
    try:
        if connection.vendor == "postgresql":
            with _database_slot(key=key, limit=limit, deadline=deadline, wait_s=wait_s):
                yield
            return
        directory = slot_directory()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PlayerError(
                f"cannot create the concurrency slot directory {directory}: {exc.strerror}; "
                "set ENVDUELS_VAR_DIR to a writable directory"
            ) from exc
        while (fd := _try_slot(directory, key, limit)) is None:
            if time.monotonic() >= deadline:
                raise PlayerError(
                    f"no free concurrency slot for player {key} after {wait_s:g} s "
                    "(other processes on this host hold them all)"
                )
            time.sleep(POLL_INTERVAL_S)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock
        semaphore.release()
