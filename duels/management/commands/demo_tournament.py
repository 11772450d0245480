"""`manage.py demo_tournament`: queue a small tournament of built-in players on an empty database.

`make run` calls it so a newcomer sees duels appear and stream live. The whole built-in roster
plays, so every setter style and every degree of hint use shows: hint gains, decisive duels and a
ranking. It does nothing when any tournament exists, so running it again is harmless.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from duels.engine.queue import tournament_enqueue
from duels.engine.tournaments import tournament_create
from duels.models import Player, Tournament
from duels.players.builtin import BUILTIN_PLAYER_SPECS
from duels.services.players import player_seed_builtin

DEMO_PLAYERS = tuple(spec["name"] for spec in BUILTIN_PLAYER_SPECS)
# 20 duels of 8 episodes: about 3-5 minutes with two workers and ENVDUELS_BUILTIN_LATENCY_MS=250.
DEMO_ROUNDS, DEMO_ATTEMPTS = 2, 2


class Command(BaseCommand):
    help = "Create and queue a small demo tournament of built-in players if there is none."
    requires_system_checks = []

    def handle(self, *args, **options) -> None:
        if Tournament.objects.exists():
            self.stdout.write("tournaments exist already; no demo tournament queued")
            return
        players = list(Player.objects.filter(builtin=True, name__in=DEMO_PLAYERS))
        if len(players) < len(DEMO_PLAYERS):
            player_seed_builtin()
            players = list(Player.objects.filter(builtin=True, name__in=DEMO_PLAYERS))
        tournament = tournament_create(
            players=players, rounds=DEMO_ROUNDS, attempts=DEMO_ATTEMPTS, concurrency=8,
            observe=True, name="Demo: built-in players, observe mode",
        )
        tournament_enqueue(tournament=tournament)
        self.stdout.write(f"demo tournament {tournament.uuid} queued: {tournament.duels_total} "
                          "duels; the workers started by `serve` play it")
