"""Shared pieces of the duel-engine commands: player lookup and the terminal progress bar."""

from __future__ import annotations

from django.core.management.base import CommandError

from duels.models import Player, Tournament
from duels.players import PlayerError, player_require_credentials


def players_by_name(names: list[str]) -> list[Player]:
    """Return the players named (as the UI shows them); an unknown name lists the known ones."""
    found = {player.name: player for player in Player.objects.filter(name__in=names)}
    unknown = [name for name in names if name not in found]
    if unknown:
        known = ", ".join(Player.objects.order_by("name").values_list("name", flat=True))
        raise CommandError(
            f"unknown player(s): {', '.join(unknown)}. Known players: {known or '(none)'}"
            + ("" if known else " — run `manage.py seed_builtin` to add the built-in players")
        )
    return [found[name] for name in names]


def require_credentials(players: list[Player]) -> None:
    """Fail before any work when a player's API-key variable is not set."""
    for player in players:
        try:
            player_require_credentials(player)
        except PlayerError as exc:
            raise CommandError(str(exc)) from None


def require_sandbox() -> None:
    """Fail before any work when no sandbox backend works on this machine."""
    from django.conf import settings

    from sandbox_runner import SandboxUnavailable, resolve_backend

    try:
        resolve_backend(settings.ENVDUELS_SANDBOX)
    except SandboxUnavailable as exc:
        raise CommandError(str(exc)) from None


def progress_line(tournament: Tournament, *, width: int = 30) -> str:
    done, total = tournament.duels_done, tournament.duels_total or 1
    filled = round(width * done / total)
    return (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{tournament.duels_total} duels · "
            f"{tournament.episodes_running} episodes running · {tournament.status}")


class ProgressPrinter:
    """Redraws one line on a terminal; prints a new line only on change elsewhere."""

    def __init__(self, stream) -> None:
        self.stream = stream  # a command's OutputWrapper
        self.last = ""

    def show(self, tournament: Tournament) -> None:
        line = progress_line(tournament)
        if line == self.last:
            return
        self.last = line
        if self.stream.isatty():
            self.stream.write("\r\033[K" + line, ending="")
        else:
            self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        if self.last and self.stream.isatty():
            self.stream.write("")
            self.stream.flush()
