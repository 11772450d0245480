"""The task worker processes of one machine, kept running: `manage.py worker` and `serve` use this.

A supervisor starts `concurrency` engine workers (django_tasks_db `db_worker` processes serving
the engine's queues) and one service worker for the short jobs (the stale-work sweep, analytics
refreshes), so those never wait behind a long tournament. It restarts a child that dies (with a
backoff when one keeps dying), writes each child's heartbeat row, reaps task rows left RUNNING by
workers that died (here or on other machines), and on SIGTERM/SIGINT stops every child cleanly:
each hands its running episodes back between two steps. Children get SIGTERM from the kernel if
the supervisor itself is killed, so nothing is left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from duels.engine.heartbeats import WorkerBeat, heartbeat_seconds

logger = logging.getLogger(__name__)

# The engine's queues (drivers of tournaments and duels) and the short jobs' queues. Together
# they are every queue in settings.TASKS; a bare `db_worker` serves only "default".
ENGINE_QUEUES = ("duels", "episodes")
SERVICE_QUEUES = ("default", "analytics")
STOP_GRACE_SECONDS = 10
PR_SET_PDEATHSIG = 1


def all_queues() -> list[str]:
    """Every queue the task backend knows (what a worker machine must serve)."""
    return list(settings.TASKS["default"].get("QUEUES", [])) or [*ENGINE_QUEUES, *SERVICE_QUEUES]


def _die_with_parent() -> None:
    # Runs in the child between fork and exec; the supervisor has no other threads then.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Child:
    """One supervised process; `worker_id` and `queues` are set for task workers."""

    name: str
    argv: list[str]
    worker_id: str = ""
    queues: tuple[str, ...] = ()
    process: subprocess.Popen | None = None
    restarts: int = 0
    started_at: float = 0.0
    started_wall: datetime = field(default_factory=timezone.now)

    def renamed(self, suffix: str) -> None:
        """Give a restarted worker a fresh id: task rows the old one left RUNNING stay with the
        old id, which stops beating and is reaped even if the database was down when it died."""
        base = self.worker_id.split("@", 1)
        new_id = f"{base[0].split('.', 1)[0]}.{suffix}@{base[1] if len(base) > 1 else ''}"[:64]
        self.argv[self.argv.index("--worker-id") + 1] = new_id
        self.worker_id = new_id

    def start(self) -> None:
        self.process = subprocess.Popen(self.argv, start_new_session=True,
                                        preexec_fn=_die_with_parent)
        self.started_at, self.started_wall = time.monotonic(), timezone.now()

    def beat(self) -> WorkerBeat:
        """What this (running) worker's heartbeat row records."""
        return WorkerBeat(worker_id=self.worker_id, pid=self.process.pid, queues=self.queues,
                          started_at=self.started_wall)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, signum: int) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)


def worker_children(*, concurrency: int, prefix: str) -> list[Child]:
    """`concurrency` engine workers and one service worker, named `<prefix>-...`."""
    manage = str(Path(settings.BASE_DIR) / "manage.py")
    host = socket.gethostname()[:40]

    def child(name: str, queues: tuple[str, ...]) -> Child:
        worker_id = f"{prefix}-{name}@{host}"[:64]
        # The supervisor's command ran Django's system checks as it started; a child (and each
        # restart of one) skips them, which halves its start-up.
        argv = [sys.executable, manage, "db_worker", "--queue-name", ",".join(queues),
                "--no-reload", "--no-startup-delay", "--interval", "0.5",
                "--worker-id", worker_id, "--skip-checks"]
        return Child(name=name, argv=argv, worker_id=worker_id, queues=queues)

    engine = [child(f"worker-{n}", ENGINE_QUEUES) for n in range(1, concurrency + 1)]
    served = set(ENGINE_QUEUES) | set(SERVICE_QUEUES)
    extra = tuple(name for name in all_queues() if name not in served)
    return [*engine, child("worker-service", SERVICE_QUEUES + extra)]


class Supervisor:
    """Start the children, keep them running and beating, stop them all on a signal."""

    def __init__(self, *, children: list[Child], write: Callable[[str], None]) -> None:
        self.children, self.write = children, write
        self.stopping = threading.Event()
        self.on_started: Callable[[], None] | None = None
        self._last_beat = 0.0

    def run(self) -> None:
        """Run until SIGTERM/SIGINT; then stop every child and remove their heartbeats."""
        def request_stop(signum, frame) -> None:
            self.stopping.set()

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        for child in self.children:
            child.start()
        if self.on_started is not None:
            self.on_started()
        try:
            while not self.stopping.is_set():
                self.stopping.wait(0.5)
                for child in self.children:
                    if not self.stopping.is_set() and not child.alive():
                        self._restart(child)
                if time.monotonic() - self._last_beat >= heartbeat_seconds():
                    self._beat()
        finally:
            self._stop_all()

    def _workers(self) -> list[Child]:
        return [child for child in self.children if child.worker_id]

    def _beat(self) -> None:
        """Renew the children's heartbeats and reap work of dead workers; a database that is
        down for a moment only delays this."""
        from duels.engine.worker_registry import worker_heartbeat_renew, worker_reap_dead
        from duels.engine.workers import work_resume_stale

        self._last_beat = time.monotonic()
        try:
            close_old_connections()
            worker_heartbeat_renew(workers=[child.beat() for child in self._workers()
                                            if child.alive()])
            worker_reap_dead()
            # Hand on work nobody holds (say, drivers that failed while the database was
            # restarting) without waiting for a sweep task that may have failed too.
            work_resume_stale()
        except DatabaseError as error:
            logger.warning("worker heartbeat skipped, database unavailable: %s", error)
            connection.close()

    def _restart(self, child: Child) -> None:
        from duels.engine.worker_registry import worker_reap

        code = child.process.returncode if child.process else None
        if child.worker_id:
            # This one is known dead: its task rows are reaped now, not after missed beats.
            with contextlib.suppress(DatabaseError):
                worker_reap(worker_ids=[child.worker_id], reason=f"exited with status {code}")
        # Back off when a child keeps dying right after it starts.
        if time.monotonic() - child.started_at < 5:
            self.stopping.wait(min(30, 2 ** min(child.restarts, 5)))
            if self.stopping.is_set():
                return
        child.restarts += 1
        if child.worker_id:
            child.renamed(str(child.restarts))
        self.write(f"{child.name} exited with status {code}; restarting it.")
        child.start()

    def _stop_all(self) -> None:
        from duels.engine.worker_registry import worker_heartbeat_remove

        self.write("Stopping…")
        for child in self.children:
            child.signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in self.children:
            if child.process is None:
                continue
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.signal(signal.SIGKILL)
                child.process.wait()
        try:
            worker_heartbeat_remove(worker_ids=[child.worker_id for child in self._workers()])
        except DatabaseError:
            logger.warning("could not remove this machine's worker heartbeats", exc_info=True)
        self.write("Stopped.")
