"""Run EnvDuels in the foreground: Daphne (HTTP + websockets) and the task workers.

Ctrl-C or SIGTERM stops every child cleanly; a child that dies is restarted. Children also
get SIGTERM from the kernel if this supervisor itself is killed, so nothing is left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

PR_SET_PDEATHSIG = 1
STOP_GRACE_SECONDS = 10


def _die_with_parent() -> None:
    # Runs in the child between fork and exec; the supervisor is single-threaded here.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen | None = None
    restarts: int = 0
    started_at: float = 0.0

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.argv,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # the supervisor has no threads
        )
        self.started_at = time.monotonic()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, signum: int) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)


class Command(BaseCommand):
    help = "Serve EnvDuels on one port (Daphne) and run the background task workers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers",
            type=int,
            default=3,
            help="engine db_worker processes (≥1); one more serves the short jobs",
        )

    def handle(self, *args, host: str, port: int, workers: int, **options) -> None:
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        # Engine workers each drive a duel or a tournament for as long as it runs; one more
        # worker keeps the short jobs (stale-work sweep, analytics refresh) moving meanwhile.
        children = [
            self._worker(manage, f"worker-{n}", "duels,episodes") for n in range(1, workers + 1)
        ]
        children.append(self._worker(manage, "worker-service", "default,analytics"))
        children.append(
            Child(
                name="daphne",
                argv=[
                    sys.executable, "-m", "daphne", "-b", host, "-p", str(port),
                    "--proxy-headers", "envduels_site.asgi:application",
                ],
            )
        )
        stopping = {"signal": None}

        def request_stop(signum, frame) -> None:
            stopping["signal"] = signum

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)

        # Work a killed worker left behind is queued again before new workers start.
        subprocess.run([sys.executable, manage, "resume_stale"], check=False)
        for child in children:
            child.start()
        self._announce(host, port, workers)

        try:
            while stopping["signal"] is None:
                time.sleep(0.5)
                for child in children:
                    if stopping["signal"] is None and not child.alive():
                        self._restart(child)
        finally:
            self._stop_all(children)

    @staticmethod
    def _worker(manage: str, name: str, queues: str) -> Child:
        argv = [sys.executable, manage, "db_worker", "--queue-name", queues, "--no-reload"]
        worker_id = f"serve-{os.getpid()}-{name}"
        argv += ["--no-startup-delay", "--interval", "0.5", "--worker-id", worker_id]
        return Child(name=name, argv=argv)

    def _announce(self, host: str, port: int, workers: int) -> None:
        login_file = settings.VAR_DIR / "initial_login.txt"
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"EnvDuels is running at http://{host}:{port}/"))
        if login_file.exists():
            self.stdout.write(f"Sign in with the login in {login_file}:")
            self.stdout.write("    " + login_file.read_text().strip().replace("\n", "\n    "))
        self.stdout.write(
            f"{workers} engine worker(s) and 1 service worker running. Press Ctrl-C to stop.\n"
        )

    def _restart(self, child: Child) -> None:
        code = child.process.returncode if child.process else None
        # Back off when a child keeps dying right after it starts.
        if time.monotonic() - child.started_at < 5:
            time.sleep(min(30, 2 ** min(child.restarts, 5)))
        child.restarts += 1
        self.stderr.write(f"{child.name} exited with status {code}; restarting it.")
        child.start()

    def _stop_all(self, children: list[Child]) -> None:
        self.stdout.write("Stopping…")
        for child in children:
            child.signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in children:
            if child.process is None:
                continue
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.signal(signal.SIGKILL)
                child.process.wait()
        self.stdout.write("Stopped.")
