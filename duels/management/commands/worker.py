"""`manage.py worker [--concurrency N]`: run the engine's work on this machine, in the foreground.

Serves every task queue (the engine's and the short jobs'); any number of machines sharing the
database (and Redis, for live streaming) may run one. Ctrl-C or SIGTERM stops it cleanly.
"""

from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError

from duels.engine.supervisor import Supervisor, worker_children


class Command(BaseCommand):
    help = ("Run EnvDuels task workers on this machine: N engine workers plus one for the short "
            "jobs, serving every queue; restarts workers that die and reaps dead workers' tasks.")

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--concurrency", type=int, default=2,
            help="engine worker processes (≥1), each driving one tournament or duel at a time",
        )

    def handle(self, *args, concurrency: int, **options) -> None:
        if concurrency < 1:
            raise CommandError("--concurrency must be at least 1")
        # The supervisor's first beat queues again any work a killed worker left behind.
        children = worker_children(concurrency=concurrency, prefix=f"worker-{os.getpid()}")
        self.stdout.write(self.style.SUCCESS(
            f"{concurrency} engine worker(s) and 1 service worker running, serving queues "
            f"{', '.join(sorted({q for child in children for q in child.queues}))}. "
            "Press Ctrl-C to stop."))
        Supervisor(children=children, write=self.stdout.write).run()
