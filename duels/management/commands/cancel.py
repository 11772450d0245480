"""`manage.py cancel UUID`: cancel a duel, a tournament, a study or a panel evaluation; its work
stops within a step.

One that already ended is left as it is, and the command exits non-zero saying so."""

from __future__ import annotations

from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from duels.engine.duels import duel_cancel
from duels.engine.tournaments import tournament_cancel
from duels.models import Duel, Evaluation, Study, Tournament
from duels.panels.evaluation import evaluation_cancel
from duels.studies.creation import study_cancel


class Command(BaseCommand):
    help = "Cancel a duel, a tournament, a study or a panel evaluation by its UUID."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("uuid")

    def handle(self, *args, uuid: str, **options) -> None:
        try:
            key = UUID(uuid)
        except ValueError:
            raise CommandError(f"{uuid!r} is not a UUID") from None
        tournament = Tournament.objects.filter(uuid=key).first()
        if tournament is not None:
            _refuse_if_done("tournament", tournament)
            tournament = tournament_cancel(tournament=tournament)
            self.stdout.write(f"tournament {tournament.uuid} {tournament.status}")
            return
        duel = Duel.objects.filter(uuid=key).first()
        if duel is not None:
            _refuse_if_done("duel", duel)
            duel = duel_cancel(duel=duel)
            self.stdout.write(f"duel {duel.uuid} {duel.status}")
            return
        study = Study.objects.filter(uuid=key).first()
        if study is not None:
            _refuse_if_done("study", study)
            study = study_cancel(study=study)
            self.stdout.write(f"study {study.uuid} {study.status}")
            return
        evaluation = Evaluation.objects.filter(uuid=key).first()
        if evaluation is not None:
            _refuse_if_done("evaluation", evaluation)
            evaluation = evaluation_cancel(evaluation=evaluation)
            self.stdout.write(f"evaluation {evaluation.uuid} {evaluation.status} (evaluating "
                              "the player again plays what it left)")
            return
        raise CommandError(f"no duel, tournament, study or evaluation has UUID {key}")


def _refuse_if_done(kind: str, obj: Duel | Tournament | Study | Evaluation) -> None:
    """A run that already ended cannot be cancelled: say so, exit non-zero."""
    if obj.is_done:
        raise CommandError(f"{kind} {obj.uuid} already ended ({obj.status}); nothing was "
                           "cancelled")
