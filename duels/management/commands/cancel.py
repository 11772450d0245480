"""`manage.py cancel UUID`: cancel a duel or a tournament; its work stops within a step."""

from __future__ import annotations

from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from duels.engine.duels import duel_cancel
from duels.engine.tournaments import tournament_cancel
from duels.models import Duel, Tournament


class Command(BaseCommand):
    help = "Cancel a duel or a tournament by its UUID."

    def add_arguments(self, parser) -> None:
        parser.add_argument("uuid")

    def handle(self, *args, uuid: str, **options) -> None:
        try:
            key = UUID(uuid)
        except ValueError:
            raise CommandError(f"{uuid!r} is not a UUID") from None
        tournament = Tournament.objects.filter(uuid=key).first()
        if tournament is not None:
            tournament = tournament_cancel(tournament=tournament)
            self.stdout.write(f"tournament {tournament.uuid} {tournament.status}")
            return
        duel = Duel.objects.filter(uuid=key).first()
        if duel is not None:
            duel = duel_cancel(duel=duel)
            self.stdout.write(f"duel {duel.uuid} {duel.status}")
            return
        raise CommandError(f"no duel or tournament has UUID {key}")
