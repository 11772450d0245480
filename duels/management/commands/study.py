"""`manage.py study --players A,B,… --per-author M --seeds K --harden H --domains d1,d2,…`:
create a study and hand it to the workers, or follow it with --wait (as `tournament` does).

With --wait the command follows the background workers with a live progress line; if no worker
picks the study up within a few seconds it says so and runs the study in this process (the
queued tasks then find nothing left to do). Ctrl-C (SIGTERM) stops following, or, when running
here, hands the work back after the current steps; the study itself keeps going.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, OutputWrapper

from duels.management.commands._engine import (
    dry_run_write,
    players_by_name,
    require_credentials,
    run_follow,
    study_progress_line,
)
from duels.models import Study
from duels.studies.creation import (
    StudyError,
    StudyPlan,
    study_create,
    study_enqueue,
    study_plan,
    study_plan_projection,
)
from duels.studies.scope import study_drive
from duels.studies.selectors import study_result

PICKUP_SECONDS = 5.0
TASK_PATH = "duels.tasks.study_drive_task"


class Command(BaseCommand):
    help = ("Create a study (a field run: every author writes M environments over the domains, "
            "revises each H times after the field played it, and every player plays every "
            "version on K seeds in both conditions) and hand it to the workers.")
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--players", required=True, help="comma-separated player names")
        parser.add_argument("--per-author", type=int, required=True,
                            help="environment slots per author (M)")
        parser.add_argument("--seeds", type=int, required=True,
                            help="benchmark seeds per environment (k)")
        parser.add_argument("--harden", type=int, required=True,
                            help="hardening rounds after play, 0 to 3 (H)")
        parser.add_argument("--domains", required=True,
                            help="comma-separated domains each author's slots are spread over")
        parser.add_argument("--no-self-play", action="store_true",
                            help="authors do not play their own versions")
        parser.add_argument("--observe", action="store_true",
                            help="setters see digests of the study's versions already played")
        parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight")
        parser.add_argument("--cost-cap", type=float, default=None, help="USD")
        parser.add_argument("--name", default="")
        parser.add_argument("--dry-run", action="store_true",
                            help="create nothing: print the expected model calls and cost range")
        parser.add_argument("--wait", action="store_true", help="follow it to the end")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options) -> None:
        names = [name.strip() for name in options["players"].split(",") if name.strip()]
        players = players_by_name(names)
        try:
            plan = study_plan(
                players=players, per_author=options["per_author"], seeds=options["seeds"],
                harden_rounds=options["harden"], domains=options["domains"],
                self_play=not options["no_self_play"], observe=options["observe"],
                concurrency=options["concurrency"], cost_cap=options["cost_cap"],
                name=options["name"])
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        if options["dry_run"]:
            self._dry_run(plan, as_json=options["json"])
            return
        require_credentials(list(plan.players))
        study = study_create(plan=plan)
        study_enqueue(study=study)
        # Progress and notes are not errors: stdout in the normal style, or plain stderr when
        # stdout carries the JSON result.
        self.notes = OutputWrapper(self.stderr._out) if options["json"] else self.stdout
        if not options["json"]:
            self.notes.write(f"study {study.uuid}: {study.name}, {study.slots_total} slots, "
                             f"up to {plan.versions} versions and {plan.episodes:,} field plays")
        if options["wait"]:
            self._follow(study)
        result = study_result(study=study)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(f"{result['study']} {result['status']}: "
                              f"{result['environments']} environment versions, "
                              f"{result['episodes']} field plays")

    def _dry_run(self, plan: StudyPlan, *, as_json: bool) -> None:
        """Print what the study would cost; nothing is created or enqueued."""
        dry_run_write(
            self.stdout, estimate=study_plan_projection(plan=plan), as_json=as_json,
            what=(f"{len(plan.slots)} slots, {plan.versions} versions, "
                  f"{plan.episodes:,} field plays"),
            shown={"players": [p.name for p in plan.players], "domains": list(plan.domains),
                   "slots": len(plan.slots), "versions": plan.versions,
                   "episodes": plan.episodes})

    def _follow(self, study: Study) -> None:
        run_follow(notes=self.notes, run=study, noun="study", task_path=TASK_PATH,
                   kwarg="study_uuid", drive=study_drive, line=study_progress_line,
                   pickup_seconds=PICKUP_SECONDS)
