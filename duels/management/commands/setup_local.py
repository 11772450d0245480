"""`manage.py setup_local`: everything `make run` needs before it serves, in one process.

Applies migrations, seeds the built-in players, creates the first admin login and queues the
demo tournament and the demo study; each step does nothing when it is already done, so starting
an installation that is set up costs one Django start-up instead of five.
"""

from __future__ import annotations

from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("Migrate, seed built-in players, ensure an admin login, queue the demo tournament "
            "and the demo study.")
    requires_system_checks = []

    def handle(self, *args, **options) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        for name in ("seed_builtin", "ensure_admin", "demo_tournament", "demo_study"):
            call_command(name, stdout=self.stdout, stderr=self.stderr)
