"""Plain data shared by the supervisor (which beats) and the worker registry (which records the
beats and reaps the dead): the beat's timing and what one beat says about a worker process.

Neither imports the other for these; the supervisor calls the registry, never the reverse.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

DEAD_AFTER_BEATS = 3


def heartbeat_seconds() -> float:
    """How often a supervisor renews its workers' heartbeats (ENVDUELS_WORKER_HEARTBEAT_SECONDS)."""
    return float(getattr(settings, "ENVDUELS_WORKER_HEARTBEAT_SECONDS", 10))


def worker_dead_after() -> timedelta:
    """How long a worker's heartbeat may stand still before the worker counts as dead."""
    return timedelta(seconds=DEAD_AFTER_BEATS * heartbeat_seconds())


@dataclass(frozen=True)
class WorkerBeat:
    """One live task worker process, as its heartbeat row records it."""

    worker_id: str
    pid: int
    queues: tuple[str, ...]
    started_at: datetime
