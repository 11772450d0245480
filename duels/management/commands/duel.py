"""`manage.py duel A B [--attempts K] [--json]`: run one duel in the foreground."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from duels.engine.duels import DuelError, duel_cancel, duel_create, duel_result
from duels.engine.scheduler import duel_run
from duels.engine.workers import stop_on_signals
from duels.management.commands._engine import (
    players_by_name,
    require_credentials,
    require_sandbox,
)
from duels.management.commands._text import figure
from duels.models import Status
from duels.words.units import hint_gain_text


class Command(BaseCommand):
    help = "Run one duel of two players in the foreground and print the result."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("a", help="player A (name as shown in the UI)")
        parser.add_argument("b", help="player B")
        parser.add_argument("--attempts", type=int, default=4, help="k seeds per condition")
        parser.add_argument("--json", action="store_true", help="print the machine-readable result")

    def handle(self, *args, a: str, b: str, attempts: int, json: bool, **options) -> None:
        player_a, player_b = players_by_name([a, b])
        # Fail before any work when a key is missing or nothing can sandbox the environments.
        require_credentials([player_a, player_b])
        require_sandbox()
        try:
            duel = duel_create(a=player_a, b=player_b, attempts=attempts)
        except DuelError as exc:
            raise CommandError(str(exc)) from None
        if not json:
            self.stdout.write(f"duel {duel.uuid}: {player_a.name} vs {player_b.name}, k={attempts}")
        with stop_on_signals() as stop:
            duel = duel_run(duel=duel, stop=stop)
        if stop.is_set() and not duel.is_done:
            duel_cancel(duel=duel, reason="interrupted from the command line")
            raise CommandError(f"interrupted; duel {duel.uuid} cancelled after its current steps")
        result = duel_result(duel=duel)
        self.stdout.write(_dumps(result) if json else _human(result, status=duel.status))
        if duel.status != Status.FINISHED:
            # The result is printed either way; the exit code tells a script it is not one.
            raise CommandError(f"duel {duel.uuid} {duel.status}: {duel.error or 'no result'}")


def _dumps(result: dict) -> str:
    return json.dumps(result, indent=2)


def _human(result: dict, *, status: str) -> str:
    outcome = result["outcome"] or "none (the duel did not finish)"
    lines = [f"duel {result['duel']} {status}; outcome: {outcome}"]
    for side in ("a", "b"):
        row = result[side]
        if row["forfeit_reason"]:
            lines.append(f"  {side.upper()} {row['player']}: forfeit — {row['forfeit_reason']}")
            continue
        if row.get("voided"):
            lines.append(f"  {side.upper()} {row['player']}: {row['void_reason']}")
            continue
        lines.append(
            f"  {side.upper()} {row['player']} as setter: p_unhinted {figure(row['p_unhinted'])}, "
            f"p_hinted {figure(row['p_hinted'])}, hint gain {hint_gain_text(row['hint_gain'])}, "
            f"setter score {figure(row['setter_score'])}, flips {figure(row['flips'], 'd')}"
        )
    return "\n".join(lines)
