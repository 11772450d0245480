"""Create or refresh the built-in (scripted) players; idempotent."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from duels.services.players import player_seed_builtin


class Command(BaseCommand):
    help = "Create or refresh the built-in (scripted) players. Safe to run repeatedly."
    requires_system_checks = []

    def handle(self, *args, **options) -> None:
        result = player_seed_builtin()
        if result.created:
            self.stdout.write(f"Created built-in players: {', '.join(result.created)}")
        if result.updated:
            self.stdout.write(f"Updated built-in players: {', '.join(result.updated)}")
        if not result.created and not result.updated:
            self.stdout.write("Built-in players are up to date.")
