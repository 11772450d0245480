"""The per-player limit on completions in flight (`Player.max_concurrency`).

Scope: every thread and process on one host that shares the lock directory (`var/player-slots/`
by default, i.e. every worker and web process of one installation on one machine). Two layers:

- a semaphore per player inside the process, so threads queue without polling;
- `max_concurrency` lock files per player taken with `flock`, so processes on the same host share
  the limit. The kernel drops a process's locks when it dies, so a crashed worker never leaks a
  slot. Workers on *other* machines are not counted: there the limit holds per machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

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
