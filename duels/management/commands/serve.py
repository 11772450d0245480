"""Run EnvDuels in the foreground: Daphne (HTTP + websockets) and the task workers.

The task workers are the ones `manage.py worker` runs (duels/engine/supervisor.py): Ctrl-C or
SIGTERM stops every child cleanly; a child that dies is restarted. Children also get SIGTERM from
the kernel if this supervisor itself is killed, so nothing is left behind.
"""

from __future__ import annotations

import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from duels.engine.supervisor import Child, Supervisor, worker_children

# Seconds a websocket may take to be accepted. Daphne's default (5) refused most of a hundred
# viewers arriving together on a busy machine (found by the soak run); a browser waits longer.
WEBSOCKET_CONNECT_TIMEOUT = 30


def daphne_argv(*, host: str, port: int) -> list[str]:
    """Daphne's command line. Never `--proxy-headers`: Daphne would take the client address from
    the first X-Forwarded-For entry, which any client writes; the application reads the entry a
    trusted proxy appended instead (ENVDUELS_TRUSTED_PROXIES, duels.forms.accounts). Daphne runs
    with request bodies refused before they are buffered (envduels_site/http_server.py)."""
    return [sys.executable, "-m", "envduels_site.http_server", "-b", host, "-p", str(port),
            "--websocket_connect_timeout", str(WEBSOCKET_CONNECT_TIMEOUT),
            "envduels_site.asgi:application"]


class Command(BaseCommand):
    help = "Serve EnvDuels on one port (Daphne) and run the background task workers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers",
            type=int,
            default=3,
            help="engine worker processes (≥1); one more serves the short jobs",
        )

    def handle(self, *args, host: str, port: int, workers: int, **options) -> None:
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        # Daphne for pages and websockets first (it answers sooner on a busy machine), then the
        # same workers as `manage.py worker`.
        daphne = Child(name="daphne", argv=daphne_argv(host=host, port=port))
        children = [daphne, *worker_children(concurrency=workers, prefix=f"serve-{os.getpid()}")]
        # The supervisor's first beat queues again any work a killed worker left behind.
        supervisor = Supervisor(children=children, write=self.stdout.write)
        supervisor.on_started = lambda: self._announce(host, port, workers)
        supervisor.run()

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
