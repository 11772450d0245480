"""`manage.py evaluate --panel P --player X [--seeds-per-environment n] [--environments m]
[--hint-level L] [--dry-run] [--wait] [--json]`: X plays every (version, seed, condition) of
panel P it has not played yet, in the background workers (or followed with --wait).

Evaluating again goes on with the same evaluation: what was played is kept, what was left
incomplete is played again. --json prints {"panel", "player", "played", "remaining",
"incomplete"} (docs/json-outputs.md).
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, OutputWrapper

from duels.management.commands._engine import (
    players_by_name,
    require_credentials,
    run_follow,
)
from duels.models import Evaluation
from duels.panels.errors import PanelError
from duels.panels.evaluation import (
    EvaluationPlan,
    evaluation_enqueue,
    evaluation_existing,
    evaluation_plan,
    evaluation_start,
    plan_counts,
)
from duels.panels.scope import evaluation_drive
from duels.panels.selectors import panel_find

PICKUP_SECONDS = 5.0
TASK_PATH = "duels.tasks.evaluation_drive_task"


def _line(plan: EvaluationPlan):
    def line(evaluation: Evaluation) -> str:
        counts = plan_counts(plan=plan, evaluation=evaluation)
        return (f"{counts['played']}/{len(plan.cases)} played · {counts['remaining']} "
                f"remaining · {counts['incomplete']} incomplete · {evaluation.status}")
    return line


class Command(BaseCommand):
    help = ("Evaluate a player on a panel: it plays every (version, seed, condition) it has not "
            "played yet, resumably, and is ranked beside every player that played the panel.")
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--panel", required=True,
                            help="the panel: its uuid, name or manifest-hash prefix")
        parser.add_argument("--player", required=True, help="the player's name")
        parser.add_argument("--seeds-per-environment", type=int, default=None,
                            help="play each version's first n benchmark seeds (default all)")
        parser.add_argument("--environments", type=int, default=None,
                            help="play the panel's first m versions (default all)")
        parser.add_argument("--hint-level", type=int, default=1,
                            help="the hint of the hinted plays: 1 (hint or hint_1) or 2")
        parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight")
        parser.add_argument("--cost-cap", type=float, default=None, help="USD")
        parser.add_argument("--dry-run", action="store_true",
                            help="create nothing: print what is played and what is left")
        parser.add_argument("--wait", action="store_true", help="follow it to the end")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options) -> None:
        (player,) = players_by_name([options["player"].strip()])
        try:
            panel = panel_find(options["panel"])
            plan = evaluation_plan(
                panel=panel, player=player,
                seeds_per_environment=options["seeds_per_environment"],
                environments=options["environments"], hint_level=options["hint_level"],
                concurrency=options["concurrency"], cost_cap=options["cost_cap"])
        except PanelError as exc:
            raise CommandError(str(exc)) from None
        self.notes = OutputWrapper(self.stderr._out) if options["json"] else self.stdout
        for entry_id, why in plan.skipped:
            self.notes.write(f"not played: {entry_id}: {why}")
        if options["dry_run"]:
            self._result(plan, evaluation_existing(plan=plan), as_json=options["json"],
                         prefix="dry run: ")
            return
        require_credentials([player])
        evaluation = evaluation_start(plan=plan)
        evaluation_enqueue(evaluation=evaluation)
        if not options["json"]:
            self.notes.write(f"evaluation {evaluation.uuid}: {player.name} on panel "
                             f"{panel.name} ({panel.short_hash}), {len(plan.cases)} plays")
        if options["wait"] and not evaluation.is_done:
            run_follow(notes=self.notes, run=evaluation, noun="evaluation",
                       task_path=TASK_PATH, kwarg="evaluation_uuid", drive=evaluation_drive,
                       line=_line(plan), pickup_seconds=PICKUP_SECONDS)
        self._result(plan, evaluation, as_json=options["json"])

    def _result(self, plan: EvaluationPlan, evaluation: Evaluation | None, *, as_json: bool,
                prefix: str = "") -> None:
        counts = plan_counts(plan=plan, evaluation=evaluation)
        if as_json:
            self.stdout.write(json.dumps({"panel": str(plan.panel.uuid),
                                          "player": plan.player.name, **counts}, indent=2))
            return
        self.stdout.write(f"{prefix}{plan.player.name} on panel {plan.panel.name}: "
                          f"{counts['played']} played, {counts['remaining']} remaining, "
                          f"{counts['incomplete']} incomplete")
