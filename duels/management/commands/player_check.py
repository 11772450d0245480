"""`manage.py player_check NAME`: is this player reachable, and what does it answer?"""

from __future__ import annotations

import json
import re
import uuid

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.models import Player
from duels.services.player_checks import player_check_run

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def terminal_safe(text: str) -> str:
    """Show control characters from a model's reply as escapes instead of sending them to a tty."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)


class Command(BaseCommand):
    help = "Send one tiny prompt to a player; report latency, tokens and reply, or the exact error."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the player's name (or uuid)")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the result as JSON"
        )

    def handle(self, *args, name: str, as_json: bool = False, **options) -> None:
        player = Player.objects.filter(name=name).first()
        if player is None and _is_uuid(name):
            player = Player.objects.filter(uuid=name).first()
        if player is None:
            known = ", ".join(Player.objects.values_list("name", flat=True)[:20]) or "none"
            raise CommandError(f"no player named {name!r}; known players: {known}")
        result = player_check_run(player=player)
        if as_json:
            self.stdout.write(json.dumps(result.as_dict(), indent=2))
        else:
            where = f" at {result.base_url}" if result.base_url else ""
            self.stdout.write(f"player {result.player}: {result.provider} {result.model}{where}")
            if result.ok:
                self.stdout.write(
                    f"ok: latency {result.latency_ms} ms, tokens {result.input_tokens} in / "
                    f"{result.output_tokens} out, cost ${result.cost:.6f}"
                )
                self.stdout.write(f"reply: {terminal_safe(result.reply)}")
                read = (f"action: {terminal_safe(result.action)}" if not result.format_error
                        else f"no readable action: {result.format_error}")
                self.stdout.write(f"{read} ({result.protocol} protocol)")
        if not result.ok:
            status = f" (HTTP {result.status})" if result.status else ""
            raise CommandError(f"player_check failed{status}: {result.error}")
        if result.format_error:
            # Reachable is not enough: a solver whose replies carry no readable action never
            # acts in an environment.
            raise CommandError(
                f"player_check failed: the reply had no readable action under the "
                f"{result.protocol} protocol ({result.format_error}); a model that cannot "
                "follow the format forfeits every turn (docs/players.md)")


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
