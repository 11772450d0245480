"""`manage.py demo_study`: queue a small study of the built-in players on an empty database.

`make run` calls it (after the demo tournament) so a newcomer sees a field run: the five built-in
players each write two environments over two domains, every player plays every version on two
benchmark seeds in both conditions, and every version is hardened once from the field's digest,
so the study page shows the final versions failed more often without the hint than the first.
It does nothing when any study exists, so running it again is harmless.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from duels.models import Player, Study
from duels.players.builtin import BUILTIN_PLAYER_SPECS
from duels.services.players import player_seed_builtin
from duels.studies.creation import study_create, study_enqueue, study_plan

DEMO_PLAYERS = tuple(spec["name"] for spec in BUILTIN_PLAYER_SPECS)
# 20 versions, 400 field plays: a few minutes beside the demo tournament with `make run`'s workers.
DEMO_PER_AUTHOR, DEMO_SEEDS, DEMO_HARDEN = 2, 2, 1
DEMO_DOMAINS = ("maze", "cipher")


class Command(BaseCommand):
    help = "Create and queue a small demo study of the built-in players if there is none."
    requires_system_checks = []

    def handle(self, *args, **options) -> None:
        if Study.objects.exists():
            self.stdout.write("studies exist already; no demo study queued")
            return
        players = list(Player.objects.filter(builtin=True, name__in=DEMO_PLAYERS))
        if len(players) < len(DEMO_PLAYERS):
            player_seed_builtin()
            players = list(Player.objects.filter(builtin=True, name__in=DEMO_PLAYERS))
        plan = study_plan(players=players, per_author=DEMO_PER_AUTHOR, seeds=DEMO_SEEDS,
                          harden_rounds=DEMO_HARDEN, domains=list(DEMO_DOMAINS), concurrency=8,
                          name="Demo: the built-in players' field, hardened once")
        study = study_create(plan=plan)
        study_enqueue(study=study)
        self.stdout.write(f"demo study {study.uuid} queued: {len(plan.slots)} slots, up to "
                          f"{plan.episodes} field plays; the workers started by `serve` play it")
