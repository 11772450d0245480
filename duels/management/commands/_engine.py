"""Shared pieces of the duel-engine commands: player lookup and the terminal progress bar."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

from django.core.management.base import CommandError

from duels.models import Player, Study, Tournament
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


def _bar(done: int, total: int, width: int) -> str:
    filled = round(width * done / (total or 1))
    return f"[{'#' * filled}{'.' * (width - filled)}]"


def progress_line(tournament: Tournament, *, width: int = 30) -> str:
    done = tournament.duels_done
    return (f"{_bar(done, tournament.duels_total, width)} {done}/{tournament.duels_total} duels · "
            f"{tournament.episodes_running} episodes running · {tournament.status}")


def study_progress_line(study: Study, *, width: int = 30) -> str:
    return (f"{_bar(study.progress_percent, 100, width)} {study.slots_done}/{study.slots_total} "
            f"slots · {study.episodes_done}/{study.episodes_total} field plays · "
            f"{study.episodes_running} running · {study.status}")


class ProgressPrinter:
    """Redraws one line on a terminal; prints a new line only on change elsewhere."""

    def __init__(self, stream, *, line: Callable = progress_line) -> None:
        self.stream = stream  # a command's OutputWrapper
        self.line = line  # the run's one-line summary
        self.last = ""

    def show(self, run) -> None:
        line = self.line(run)
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


def run_follow(*, notes, run, noun: str, task_path: str, kwarg: str, drive: Callable,
               line: Callable, pickup_seconds: float) -> None:
    """Follow a queued run (a tournament, a study) with a live progress line until it ends.

    When no worker picks it up within `pickup_seconds`, say so and drive it in this process
    (`drive(<noun>=run, stop=event)`). SIGTERM or Ctrl-C stops following, or hands the work
    back after the current steps when it runs here; the run itself goes on.
    """
    from duels.engine.workers import stop_on_signals

    printer = ProgressPrinter(notes, line=line)
    with stop_on_signals() as stop:
        inline = None
        if not _picked_up(run=run, task_path=task_path, kwarg=kwarg, stop=stop,
                          pickup_seconds=pickup_seconds):
            notes.write(f"no worker picked the {noun} up (start one with "
                        "`python manage.py worker`); running it here")
            inline = threading.Thread(target=_drive_here,
                                      kwargs={"drive": drive, noun: run, "stop": stop})
            inline.start()
        while not stop.is_set():
            run.refresh_from_db()
            printer.show(run)
            if run.is_done or (inline is not None and not inline.is_alive()):
                break
            stop.wait(0.5)
        if inline is not None:
            inline.join()
        printer.close()
    if stop.is_set():
        notes.write(f"stopped following; {noun} {run.uuid} goes on in the workers "
                    f"(cancel it with `manage.py cancel {run.uuid}`)")


def _picked_up(*, run, task_path: str, kwarg: str, stop: threading.Event,
               pickup_seconds: float) -> bool:
    from django_tasks_db.models import DBTaskResult

    deadline = time.monotonic() + pickup_seconds
    tasks = DBTaskResult.objects.filter(task_path=task_path,
                                        **{f"args_kwargs__kwargs__{kwarg}": str(run.uuid)})
    while time.monotonic() < deadline and not stop.is_set():
        if tasks.exclude(status="READY").exists():
            return True
        stop.wait(0.25)
    return False


def _drive_here(*, drive: Callable, **kwargs) -> None:
    from django.db import connections

    try:
        drive(**kwargs)
    finally:
        connections.close_all()


def duration_text(seconds: float) -> str:
    """`45 s`, `12 min`, `3.5 h`: a dry run's model time as a person reads it."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def dry_run_write(stdout, *, estimate, what: str, as_json: bool, shown: dict) -> None:
    """Print a dry run's bill: `shown` (the run's size) and the expected calls and cost, as JSON
    or as the lines a person reads (`what` names the size: "12 duels")."""
    if as_json:
        stdout.write(json.dumps({
            "dry_run": True, **shown,
            "calls": {"low": estimate.calls_low, "expected": estimate.calls_expected,
                      "high": estimate.calls_high},
            "cost": {"low": round(estimate.cost_low, 6),
                     "expected": round(estimate.cost_expected, 6),
                     "high": round(estimate.cost_high, 6)},
            "model_seconds": {"low": round(estimate.seconds_low),
                              "expected": round(estimate.seconds_expected),
                              "high": round(estimate.seconds_high)},
            "assumptions": estimate.assumptions,
        }, indent=2))
        return
    stdout.write(
        f"dry run: {what}, {estimate.calls_expected:,} model calls expected "
        f"({estimate.calls_low:,}-{estimate.calls_high:,}); "
        f"cost ${estimate.cost_expected:,.2f} expected "
        f"(${estimate.cost_low:,.2f}-${estimate.cost_high:,.2f}); nothing was created"
    )
    stdout.write(
        f"model time {duration_text(estimate.seconds_expected)} expected "
        f"({duration_text(estimate.seconds_low)}-{duration_text(estimate.seconds_high)}), "
        "one call at a time as a local model's server runs them; concurrent calls to a hosted "
        "API take less wall time")
    stdout.write("low: every episode ends after one action; high: every episode runs "
                 "to its step limit with nothing read from the prompt cache")
    for note in estimate.assumptions:
        stdout.write(f"assumed: {note}")
