"""The work loop that drives a run to its end: a tournament, a single duel, a study …

The loop knows runs only through their scope (scopes.py: duel_scope.py for tournaments and duels,
duels/studies/scope.py for studies). Any number of drivers, in any number of processes, may drive
the same run: every unit of work (an authoring unit, an episode) is claimed with a conditional
UPDATE, so exactly one driver gets it. A driver runs its claimed work in threads. For the whole
run, at most `concurrency` episodes and at most `authoring_limit(concurrency)` authoring units
are in flight (counted from live leases in the database, under a lock on the run's row), so a
worker's memory depends on the concurrency and never on the size of the run. Work whose lease
expired (its worker died) is claimable again, so a surviving driver resumes it.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from duels.engine.costs import CostCapReached
from duels.engine.doorbell import doorbell_warm
from duels.engine.duel_scope import DuelScope
from duels.engine.duels import in_own_connection
from duels.engine.episodes import episode_run
from duels.engine.faults import INFRASTRUCTURE, fault_kind
from duels.engine.leases import episode_claim, worker_identity
from duels.engine.scopes import Candidate, WorkScope
from duels.engine.tournaments import tournament_start
from duels.models import Duel, Episode, Status, Tournament
from sandbox_runner import SandboxUnavailable, available_backends

logger = logging.getLogger(__name__)

# How long a driver waits before it looks at the database again when none of its own work
# ended: for others' work to end or a lease to expire. Its own work wakes it at once.
POLL_SECONDS = 1.0
DATABASE_RETRY_SECONDS = 2.0


def authoring_limit(concurrency: int) -> int:
    """Units authoring at once in a scope whose episode limit is `concurrency`.

    Each authoring unit runs setter calls and a validation sandbox next to the episodes, so it
    gets a small bound of its own: a quarter of the episode slots, at least two.
    """
    return min(max(1, concurrency), max(2, -(-concurrency // 4)))


def _claim_authoring(scope: WorkScope, owner: str, limit: int) -> int | None:
    """Claim the next unit to author unless `limit` units of the scope are authoring already."""
    # Most calls find nothing to author (every unit is past authoring, or in observe mode the
    # open round's are): one read says so without taking the scope's write lock.
    if not scope.authoring_candidates(now=timezone.now()).exists():
        return None
    with transaction.atomic():
        scope.lock()
        now = timezone.now()
        if scope.authoring_held(now=now).count() >= limit:
            return None
        for unit_id in scope.authoring_candidates(now=now).values_list("pk", flat=True)[:4]:
            if scope.authoring_claim(unit_id=unit_id, owner=owner):
                return unit_id
    return None


def _claim_episodes(scope: WorkScope, owner: str, limit: int,
                    wanted: int) -> list[tuple[int, int]]:
    """Claim up to `wanted` episodes, next first (`_claim_order`), keeping at most `limit` of the
    scope in flight; return (episode id, its unit's id) for each, in one transaction."""
    with transaction.atomic():
        scope.lock()
        now = timezone.now()
        in_flight = scope.episodes().filter(status=Status.RUNNING, lease_expires_at__gte=now
                                            ).exclude(lease_owner="").count()
        wanted = min(wanted, limit - in_flight)
        if wanted <= 0:
            return []
        candidates = scope.episode_candidates(now=now)
        claimed = []
        # A few spare candidates in case racing drivers take some first.
        for episode_id, unit_id in _claim_order(candidates)[:wanted + 3]:
            if episode_claim(episode_id=episode_id, owner=owner):
                claimed.append((episode_id, unit_id))
                if len(claimed) == wanted:
                    break
    return claimed


def _claim_order(candidates: list[Candidate]) -> list[tuple[int, int]]:
    """(episode id, unit id) of the claimable episodes, in the order they should start.

    The run ends when its last episode does, so the long episodes should start early and
    the short ones fill the end (longest first). How long an episode will run is not known before
    it runs, but an environment's episodes (its k attempts, hinted and unhinted) take much the
    same path: so, within the earliest round, an episode resumed after its worker died comes
    first, then one whose environment has had none started yet (its length is the unknown), then
    those whose environment's episodes have gone furthest (the most steps stored by any of them,
    finished or still running); the unit's order breaks ties.
    """
    environments = {environment_id for _, _, environment_id, _, _ in candidates}
    seen = {
        row["environment_id"]: (row["started"], row["furthest"] or 0)
        for row in Episode.objects.filter(environment_id__in=environments)
        .values("environment_id")
        .annotate(started=Count("pk", filter=~Q(status=Status.PENDING)), furthest=Max("steps"))
    }

    def key(candidate: Candidate) -> tuple:
        episode_id, unit_id, environment_id, round_index, status = candidate
        started, furthest = seen.get(environment_id, (0, 0))
        return (round_index, status != Status.RUNNING, started > 0, -furthest, unit_id,
                episode_id)

    return [(episode_id, unit_id) for episode_id, unit_id, *_ in sorted(candidates, key=key)]


class _Driver:
    """One driver's claimed work, run in a thread pool."""

    def __init__(self, *, scope: WorkScope, owner: str, limit: int,
                 stop: threading.Event | None) -> None:
        self.scope, self.owner, self.stop = scope, owner, stop
        self.limits = {"authoring": authoring_limit(limit), "episode": limit}
        # Each future's kind ("authoring" or "episode"), object id and unit id.
        self.active: dict[Future, tuple[str, int, int]] = {}
        # One thread per unit of claimed work: claimed work never waits in a queue unheld.
        self.pool = ThreadPoolExecutor(max_workers=sum(self.limits.values()),
                                       thread_name_prefix="envduels-work")

    def _room(self, kind: str) -> int:
        """How many more units of `kind` this driver may hold."""
        held = sum(1 for active_kind, _, _ in self.active.values() if active_kind == kind)
        return max(0, self.limits[kind] - held)

    def fill(self) -> None:
        # Authoring first: it is on the critical path and unlocks a unit's episodes.
        while self._room("authoring"):
            unit_id = _claim_authoring(self.scope, self.owner, self.limits["authoring"])
            if unit_id is None:
                break
            self._submit(("authoring", unit_id, unit_id), self.scope.author, unit_id=unit_id,
                         owner=self.owner)
        room = self._room("episode")
        if room:
            for episode_id, unit_id in _claim_episodes(self.scope, self.owner,
                                                       self.limits["episode"], wanted=room):
                self._submit(("episode", episode_id, unit_id), episode_run,
                             episode=Episode(pk=episode_id), owner=self.owner, stop=self.stop)

    def _submit(self, work: tuple[str, int, int], function, **kwargs) -> None:
        self.active[self.pool.submit(in_own_connection, function, **kwargs)] = work

    def collect(self) -> None:
        finished, _ = wait(list(self.active), timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
        for future in finished:
            kind, object_id, unit_id = self.active.pop(future)
            error = future.exception()
            authoring = kind == "authoring"
            if isinstance(error, CostCapReached) and authoring:
                self.scope.authoring_cost_capped(unit_id=object_id, reason=str(error))
            elif (isinstance(error, SandboxUnavailable) and authoring
                  and not available_backends()):
                # No sandbox works on this machine: retrying cannot help, so say so and stop.
                self.scope.authoring_impossible(unit_id=object_id, reason=str(error))
            elif authoring and fault_kind(error) == INFRASTRUCTURE:
                self.scope.authoring_infra_fault(unit_id=object_id, owner=self.owner,
                                                 error=error)
            elif error is not None:
                # The lease runs out and another driver (or this one) resumes the work.
                logger.error("%s %s stopped with an error", kind, object_id, exc_info=error)
            self.scope.work_ended(unit_id=unit_id)


def scope_drive(*, scope: WorkScope, concurrency: int = 4, stop: threading.Event | None = None,
                owner: str | None = None) -> bool:
    """Drive the scope until all its units are done; return False if stopped early by `stop`."""
    doorbell_warm()  # ready long before the first episode's first step rings it
    driver = _Driver(scope=scope, owner=owner or worker_identity(), limit=max(1, concurrency),
                     stop=stop)
    waiter = stop or threading.Event()
    try:
        while True:
            try:
                stopping = (stop is not None and stop.is_set()) or scope.cancelled()
                if not stopping:
                    driver.fill()
                if driver.active:
                    driver.collect()
                    scope.progress_refresh()
                    continue
                scope.finalize_finished()
                scope.progress_refresh()
                if stopping or scope.done():
                    break
            except DatabaseError:
                # The database is restarting or unreachable: an infrastructure fault. Claimed
                # work hands itself back; this driver waits for the database and goes on.
                logger.warning("database unavailable; the driver retries in %s s",
                               DATABASE_RETRY_SECONDS, exc_info=True)
                connection.close()
                if stop is not None and stop.is_set() and not driver.active:
                    break
                waiter.wait(DATABASE_RETRY_SECONDS)
                continue
            # Others hold the remaining work; wait for it to end or for a lease to expire.
            waiter.wait(POLL_SECONDS)
    finally:
        driver.pool.shutdown(wait=True)
    scope.finish()
    return scope.done()


def work_drive(
    *, tournament: Tournament | None = None, duel: Duel | None = None, concurrency: int = 4,
    stop: threading.Event | None = None, owner: str | None = None,
) -> bool:
    """Drive a tournament or a single duel until all its duels are done; False if stopped."""
    return scope_drive(scope=DuelScope(tournament=tournament, duel=duel),
                       concurrency=concurrency, stop=stop, owner=owner)


def duel_run(*, duel: Duel, concurrency: int | None = None,
             stop: threading.Event | None = None) -> Duel:
    """Run the duel to its end in this process (authoring, episodes in threads, scoring)."""
    work_drive(duel=duel, concurrency=concurrency or 4 * duel.attempts, stop=stop)
    duel.refresh_from_db()
    return duel


def tournament_drive(*, tournament: Tournament, stop: threading.Event | None = None) -> bool:
    """Work on the tournament in this process until it is done; False if stopped early."""
    tournament_start(tournament=tournament)
    tournament.refresh_from_db()
    if tournament.is_done:
        return True
    return work_drive(tournament=tournament, concurrency=tournament.concurrency, stop=stop)
