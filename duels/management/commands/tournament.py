"""`manage.py tournament --players a,b,c [...]`: enqueue a tournament, or follow it with --wait.

With --wait the command follows the background workers with a live progress bar. If no worker
picks the tournament up within a few seconds, it says so and runs the tournament in this process
instead (the queued tasks then find nothing left to do). Ctrl-C stops following (or, when running
here, hands the work back after the current steps); the tournament itself keeps going.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, OutputWrapper

from duels.engine.duels import DuelError
from duels.engine.queue import tournament_enqueue
from duels.engine.scheduler import tournament_drive
from duels.engine.tournaments import tournament_create, tournament_result
from duels.management.commands._engine import (
    dry_run_write,
    players_by_name,
    progress_line,
    require_credentials,
    run_follow,
)
from duels.models import Tournament
from duels.selectors.costs import tournament_projection

PICKUP_SECONDS = 5.0
TASK_PATH = "duels.tasks.tournament_drive_task"


class Command(BaseCommand):
    help = "Create a round-robin tournament and hand it to the workers (--wait follows it)."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--players", required=True, help="comma-separated player names")
        parser.add_argument("--rounds", type=int, default=1)
        parser.add_argument("--attempts", type=int, default=4, help="k seeds per condition")
        parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight")
        parser.add_argument("--observe", action="store_true",
                            help="setters see digests of earlier rounds' duels")
        parser.add_argument("--cost-cap", type=float, default=None, help="USD")
        parser.add_argument("--name", default="")
        parser.add_argument("--wait", action="store_true", help="follow it to the end")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.add_argument("--dry-run", action="store_true",
                            help="create nothing: print the expected model calls and cost range")

    def handle(self, *args, **options) -> None:
        names = [name.strip() for name in options["players"].split(",") if name.strip()]
        players = players_by_name(names)
        if options["dry_run"]:
            self._dry_run(players, options)
            return
        require_credentials(players)
        try:
            tournament = tournament_create(
                players=players, rounds=options["rounds"], attempts=options["attempts"],
                concurrency=options["concurrency"], observe=options["observe"],
                cost_cap=options["cost_cap"], name=options["name"],
            )
        except DuelError as exc:
            raise CommandError(str(exc)) from None
        tournament_enqueue(tournament=tournament)
        # Progress and notes are not errors: stdout in the normal style, or plain stderr when
        # stdout carries the JSON result.
        self.notes = OutputWrapper(self.stderr._out) if options["json"] else self.stdout
        if not options["json"]:
            self.notes.write(f"tournament {tournament.uuid}: {tournament.name}, "
                             f"{tournament.duels_total} duels")
        if options["wait"]:
            self._follow(tournament)
        result = tournament_result(tournament=tournament)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(f"{result['tournament']} {result['status']}")

    def _dry_run(self, players, options) -> None:
        """Print what the tournament would cost; nothing is created or enqueued."""
        if len(players) < 2:
            raise CommandError("a tournament needs at least two players")
        if options["rounds"] < 1 or options["attempts"] < 1:
            raise CommandError("--rounds and --attempts must be at least 1")
        estimate = tournament_projection(players=players, rounds=options["rounds"],
                                         attempts=options["attempts"])
        duels = len(players) * (len(players) - 1) // 2 * options["rounds"]
        dry_run_write(self.stdout, estimate=estimate, what=f"{duels} duels",
                      as_json=options["json"],
                      shown={"players": [p.name for p in players], "duels": duels})

    def _follow(self, tournament: Tournament) -> None:
        run_follow(notes=self.notes, run=tournament, noun="tournament", task_path=TASK_PATH,
                   kwarg="tournament_uuid", drive=tournament_drive, line=progress_line,
                   pickup_seconds=PICKUP_SECONDS)
