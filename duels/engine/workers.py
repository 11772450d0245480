"""What a background worker does around the work loop: stop cleanly on SIGTERM/SIGINT, hand
unfinished work on, and find work whose worker died (the stale sweep).

django_tasks_db never retries a task left RUNNING by a killed worker, so recovery does not rely on
tasks: the sweep looks at the leases in the database and enqueues a fresh driver for any running
tournament or duel that has claimable work and nobody holding a live lease on it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from duels.engine.leases import episodes_end_orphaned, episodes_orphaned_remain, lease_seconds
from duels.engine.queue import (
    duel_driver_enqueue,
    queued_drivers,
    run_driver_enqueue,
    stale_sweep_schedule,
    tournament_driver_enqueue,
)
from duels.engine.runs import run_kinds
from duels.engine.scheduler import tournament_drive, work_drive
from duels.models import Duel, Episode, Status, Tournament


@contextlib.contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """Yield an event set on SIGTERM/SIGINT; the previous handlers still run (the worker's own
    graceful shutdown). Outside the main thread no handler can be installed: never set then."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}

    def handler(signum, frame) -> None:
        already = stop.is_set()
        stop.set()
        chained = previous.get(signum)
        if already:
            raise KeyboardInterrupt  # a second signal: stop now
        # Chain to a worker's own graceful shutdown, but not to Python's default Ctrl-C, which
        # would interrupt the step in progress.
        if callable(chained) and chained is not signal.default_int_handler:
            chained(signum, frame)

    for signum in previous:
        signal.signal(signum, handler)
    try:
        yield stop
    finally:
        for signum, chained in previous.items():
            signal.signal(signum, chained)


def tournament_drive_in_worker(*, tournament_uuid: str) -> str:
    """Drive a tournament from a worker; hand it on to another worker if this one stops."""
    tournament = Tournament.objects.filter(uuid=tournament_uuid).first()
    if tournament is None:
        return "missing"
    with stop_on_signals() as stop:
        done = tournament_drive(tournament=tournament, stop=stop)
    if not done and not Tournament.objects.get(pk=tournament.pk).is_done:
        tournament_driver_enqueue(tournament_uuid=tournament_uuid)
        return "handed on"
    return "done"


def duel_drive_in_worker(*, duel_uuid: str) -> str:
    """Drive one duel (not in a tournament) from a worker; hand it on if this one stops."""
    duel = Duel.objects.filter(uuid=duel_uuid).first()
    if duel is None:
        return "missing"
    with stop_on_signals() as stop:
        done = work_drive(duel=duel, concurrency=4 * duel.attempts, stop=stop)
    if not done:
        duel_driver_enqueue(duel_uuid=duel_uuid)
        return "handed on"
    return "done"


def _unattended(*, episodes: Q, duels: Q | None = None,
                units: tuple[tuple[type, Q], ...] = ()) -> bool:
    """True when work in this scope is claimable and nobody holds a live lease on any of it
    (its episodes, and its authoring units: duels, or the rows another kind of run leases)."""
    now = timezone.now()
    leased = ((Duel, duels),) if duels is not None else units
    # Work waiting out an infrastructure fault's backoff has a future lease but no owner.
    live = (Episode.objects.filter(episodes, status=Status.RUNNING, lease_expires_at__gte=now)
            .exclude(lease_owner="").exists()
            or any(model.objects.filter(rows, lease_expires_at__gte=now)
                   .exclude(lease_owner="").exists() for model, rows in leased))
    if live:
        # Someone is working here; they resume expired work themselves within seconds.
        return Episode.objects.filter(episodes, status=Status.RUNNING,
                                      lease_expires_at__lt=now).exists()
    return True


def work_resume_stale() -> list[str]:
    """Enqueue a driver for every running tournament, lone duel or run of a registered kind
    (duels/engine/runs.py: studies …) that nobody is working on.

    Run when a worker starts (`manage.py resume_stale`) and periodically by the sweep task.
    Work whose driver is still waiting in the queue is not unattended: a worker will take it.
    Episodes that a failed or cancelled run still owes, and that no worker holds, end here
    with a reason (leases.episodes_end_orphaned). Returns the UUIDs handed to workers.
    """
    episodes_end_orphaned()
    resumed: list[str] = []
    queued = queued_drivers()
    for tournament in Tournament.objects.filter(status=Status.RUNNING):
        if str(tournament.uuid) in queued:
            continue
        if _unattended(episodes=Q(duel__tournament=tournament), duels=Q(tournament=tournament)):
            tournament_driver_enqueue(tournament_uuid=str(tournament.uuid))
            resumed.append(str(tournament.uuid))
    quiet_since = timezone.now() - timedelta(seconds=2 * lease_seconds())
    lone = Duel.objects.filter(tournament__isnull=True).filter(
        Q(status=Status.RUNNING) | Q(status=Status.PENDING, created_at__lt=quiet_since,
                                     created_by__isnull=False)
    )
    for duel in lone:
        if str(duel.uuid) in queued:
            continue
        if _unattended(episodes=Q(duel=duel), duels=Q(pk=duel.pk)):
            duel_driver_enqueue(duel_uuid=str(duel.uuid))
            resumed.append(str(duel.uuid))
    for kind in run_kinds():
        for run in kind.open_runs():
            if run.uuid in queued:
                continue
            if _unattended(episodes=run.episodes, units=run.units):
                run_driver_enqueue(task=kind.task, kwarg=kind.kwarg, run_uuid=run.uuid)
                resumed.append(run.uuid)
    return resumed


def stale_work_sweep() -> list[str]:
    """The periodic sweep: resume unattended work, and keep sweeping while any work is open."""
    resumed = work_resume_stale()
    open_work = (Tournament.objects.filter(status=Status.RUNNING).exists()
                 or Duel.objects.filter(tournament__isnull=True, status=Status.RUNNING).exists()
                 or any(any(True for _ in kind.open_runs()) for kind in run_kinds())
                 # a stopped run's episode still held: ended by a later sweep if its worker dies
                 or episodes_orphaned_remain())
    if open_work:
        stale_sweep_schedule()
    return resumed
