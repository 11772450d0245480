"""`manage.py demo_tournament`: queue a small tournament of built-in players on an empty database.

`make run` calls it so a newcomer sees duels appear and stream live. It does nothing when any
tournament exists, so running it again is harmless.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from duels.models import Player, Tournament
from duels.services.players import player_seed_builtin
from duels.services.tournaments import tournament_create, tournament_enqueue

DEMO_PLAYERS = ("builtin-architect", "builtin-cautious", "builtin-rookie", "builtin-watcher")


class Command(BaseCommand):
    help = "Create and queue a small demo tournament of built-in players if there is none."

    def handle(self, *args, **options) -> None:
        if Tournament.objects.exists():
            self.stdout.write("tournaments exist already; no demo tournament queued")
            return
        players = list(Player.objects.filter(builtin=True, name__in=DEMO_PLAYERS))
        if len(players) < len(DEMO_PLAYERS):
            player_seed_builtin()
            players = list(Player.objects.filter(builtin=True, name__in=DEMO_PLAYERS))
        tournament = tournament_create(
            players=players, rounds=2, attempts=2, concurrency=8, observe=True,
            name="Demo: built-in players, observe mode",
        )
        tournament_enqueue(tournament=tournament)
        self.stdout.write(f"demo tournament {tournament.uuid} queued: {tournament.duels_total} "
                          "duels; the workers started by `serve` play it")
