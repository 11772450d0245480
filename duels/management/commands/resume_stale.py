"""`manage.py resume_stale`: hand work whose worker died to the workers (run at worker start)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from duels.engine.queue import stale_sweep_schedule
from duels.engine.workers import work_resume_stale


class Command(BaseCommand):
    help = "Enqueue drivers for running tournaments and duels that no live worker holds."
    requires_system_checks = []

    def handle(self, *args, **options) -> None:
        resumed = work_resume_stale()
        stale_sweep_schedule()
        self.stdout.write(f"resumed {len(resumed)} tournament(s)/duel(s)"
                          + (": " + ", ".join(resumed) if resumed else ""))
