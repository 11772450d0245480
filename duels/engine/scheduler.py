"""The work loop that drives a tournament or a single duel to its end.

Any number of drivers, in any number of processes, may drive the same tournament: every unit of
work (a duel's authoring, an episode) is claimed with a conditional UPDATE, so exactly one driver
gets it. A driver runs its claimed work in threads. For the whole tournament, at most `concurrency`
episodes and at most `authoring_limit(concurrency)` authoring duels are in flight (counted from
live leases in the database, under a lock on the tournament row), so a worker's memory depends on
the concurrency and never on how many rounds or duels there are. Work whose lease expired (its
worker died) is claimable again, so a surviving driver resumes it.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Max, Q, QuerySet, Subquery
from django.utils import timezone

from duels.engine.costs import CostCapReached
from duels.engine.doorbell import doorbell_warm
from duels.engine.duels import (
    duel_author,
    duel_authoring_infra_fault,
    duel_cancel,
    duel_fail,
    duel_finalize_if_complete,
    in_own_connection,
)
from duels.engine.episodes import episode_run
from duels.engine.faults import INFRASTRUCTURE, fault_kind
from duels.engine.leases import (
    claimable_authoring,
    claimable_episodes,
    duel_claim_authoring,
    episode_claim,
    worker_identity,
)
from duels.engine.tournaments import (
    tournament_finalize_if_complete,
    tournament_progress_refresh,
    tournament_start,
)
from duels.models import DONE_STATUSES, Duel, Episode, Status, Tournament
from sandbox_runner import SandboxUnavailable, available_backends

logger = logging.getLogger(__name__)

# How long a driver waits before it looks at the database again when none of its own work
# ended: for others' work to end or a lease to expire. Its own work wakes it at once.
POLL_SECONDS = 1.0
DATABASE_RETRY_SECONDS = 2.0


class _Scope:
    """The duels a driver works on: one tournament's, or a single duel."""

    def __init__(self, *, tournament: Tournament | None, duel: Duel | None) -> None:
        self.tournament = tournament
        self.duel = duel

    def duels(self) -> QuerySet[Duel]:
        if self.tournament is not None:
            return Duel.objects.filter(tournament=self.tournament)
        return Duel.objects.filter(pk=self.duel.pk)

    def episodes(self) -> QuerySet[Episode]:
        if self.tournament is not None:
            return Episode.objects.filter(duel__tournament=self.tournament)
        return Episode.objects.filter(duel=self.duel)

    @property
    def observe(self) -> bool:
        return bool(self.tournament is not None and self.tournament.observe)

    def cancelled(self) -> bool:
        if self.tournament is not None:
            return Tournament.objects.filter(pk=self.tournament.pk,
                                             status=Status.CANCELLED).exists()
        return Duel.objects.filter(pk=self.duel.pk, status=Status.CANCELLED).exists()

    def done(self) -> bool:
        return not self.duels().exclude(status__in=DONE_STATUSES).exists()


def authoring_limit(concurrency: int) -> int:
    """Duels authoring at once in a scope whose episode limit is `concurrency`.

    Each authoring duel runs two setter calls and a validation sandbox next to the episodes, so it
    gets a small bound of its own: a quarter of the episode slots, at least two.
    """
    return min(max(1, concurrency), max(2, -(-concurrency // 4)))


def _lock_scope(scope: _Scope) -> None:
    """Serialise claims across drivers so the limits hold for the whole tournament."""
    if scope.tournament is not None:
        Tournament.objects.select_for_update().filter(pk=scope.tournament.pk).first()


def _authoring_candidates(scope: _Scope, now) -> QuerySet[Duel]:
    """Duels of the scope whose authoring may be claimed now; in observe mode only those of the
    earliest unfinished round."""
    candidates = scope.duels().filter(claimable_authoring(now=now))
    if scope.observe:
        open_round = (scope.duels().exclude(status__in=DONE_STATUSES)
                      .order_by("round_index").values("round_index")[:1])
        candidates = candidates.filter(round_index=Subquery(open_round))
    return candidates


def _claim_authoring(scope: _Scope, owner: str, limit: int) -> int | None:
    """Claim the next duel to author unless `limit` duels of the scope are authoring already."""
    # Most calls find nothing to author (every duel is past authoring, or in observe mode the
    # open round's are): one read says so without taking the scope's write lock.
    if not _authoring_candidates(scope, timezone.now()).exists():
        return None
    with transaction.atomic():
        _lock_scope(scope)
        now = timezone.now()
        # Work waiting out an infrastructure fault's backoff has no owner and takes no slot.
        authoring = scope.duels().filter(status=Status.RUNNING, lease_expires_at__gte=now)
        if authoring.exclude(lease_owner="").count() >= limit:
            return None
        candidates = _authoring_candidates(scope, now)
        for duel_id in candidates.order_by("round_index", "id").values_list("pk", flat=True)[:4]:
            if duel_claim_authoring(duel_id=duel_id, owner=owner):
                return duel_id
    return None


def _claim_episodes(scope: _Scope, owner: str, limit: int,
                    wanted: int) -> list[tuple[int, int]]:
    """Claim up to `wanted` episodes, next first (`_claim_order`), keeping at most `limit` of the
    scope in flight; return (episode id, its duel's id) for each, in one transaction."""
    with transaction.atomic():
        _lock_scope(scope)
        now = timezone.now()
        in_flight = scope.episodes().filter(status=Status.RUNNING, lease_expires_at__gte=now
                                            ).exclude(lease_owner="").count()
        wanted = min(wanted, limit - in_flight)
        if wanted <= 0:
            return []
        candidates = list(
            scope.episodes().filter(claimable_episodes(now=now), duel__status=Status.RUNNING)
            .values_list("pk", "duel_id", "environment_id", "duel__round_index", "status")
        )
        claimed = []
        # A few spare candidates in case racing drivers take some first.
        for episode_id, duel_id in _claim_order(candidates)[:wanted + 3]:
            if episode_claim(episode_id=episode_id, owner=owner):
                claimed.append((episode_id, duel_id))
                if len(claimed) == wanted:
                    break
    return claimed


def _claim_order(candidates: list[tuple[int, int, int, int, str]]) -> list[tuple[int, int]]:
    """(episode id, duel id) of the claimable episodes, in the order they should start.

    The tournament ends when its last episode does, so the long episodes should start early and
    the short ones fill the end (longest first). How long an episode will run is not known before
    it runs, but an environment's episodes (its k attempts, hinted and unhinted) take much the
    same path: so, within the earliest round, an episode resumed after its worker died comes
    first, then one whose environment has had none started yet (its length is the unknown), then
    those whose environment's episodes have gone furthest (the most steps stored by any of them,
    finished or still running); the duel's order breaks ties.
    """
    environments = {environment_id for _, _, environment_id, _, _ in candidates}
    seen = {
        row["environment_id"]: (row["started"], row["furthest"] or 0)
        for row in Episode.objects.filter(environment_id__in=environments)
        .values("environment_id")
        .annotate(started=Count("pk", filter=~Q(status=Status.PENDING)), furthest=Max("steps"))
    }

    def key(candidate: tuple[int, int, int, int, str]) -> tuple:
        episode_id, duel_id, environment_id, round_index, status = candidate
        started, furthest = seen.get(environment_id, (0, 0))
        return (round_index, status != Status.RUNNING, started > 0, -furthest, duel_id,
                episode_id)

    return [(episode_id, duel_id) for episode_id, duel_id, *_ in sorted(candidates, key=key)]


def _finalize_finished_duels(scope: _Scope) -> None:
    """Finish duels whose last episode ended (also after a worker died right before scoring)."""
    open_episodes = Q(episodes__status__in=[Status.PENDING, Status.RUNNING])
    for duel in scope.duels().filter(status=Status.RUNNING, lease_expires_at__isnull=True).exclude(
        open_episodes
    ).distinct():
        duel_finalize_if_complete(duel=duel)


class _Driver:
    """One driver's claimed work, run in a thread pool."""

    def __init__(self, *, scope: _Scope, owner: str, limit: int,
                 stop: threading.Event | None) -> None:
        self.scope, self.owner, self.stop = scope, owner, stop
        self.limits = {"duel": authoring_limit(limit), "episode": limit}
        # Each future's kind ("duel" or "episode"), object id and duel id.
        self.active: dict[Future, tuple[str, int, int]] = {}
        # One thread per unit of claimed work: claimed work never waits in a queue unheld.
        self.pool = ThreadPoolExecutor(max_workers=sum(self.limits.values()),
                                       thread_name_prefix="envduels-work")

    def _room(self, kind: str) -> int:
        """How many more units of `kind` this driver may hold."""
        held = sum(1 for active_kind, _, _ in self.active.values() if active_kind == kind)
        return max(0, self.limits[kind] - held)

    def fill(self) -> None:
        # Authoring first: it is on the critical path and unlocks a duel's episodes.
        while self._room("duel"):
            duel_id = _claim_authoring(self.scope, self.owner, self.limits["duel"])
            if duel_id is None:
                break
            self._submit(("duel", duel_id, duel_id), duel_author, duel=Duel(pk=duel_id),
                         owner=self.owner, claimed=True)
        room = self._room("episode")
        if room:
            for episode_id, duel_id in _claim_episodes(self.scope, self.owner,
                                                       self.limits["episode"], wanted=room):
                self._submit(("episode", episode_id, duel_id), episode_run,
                             episode=Episode(pk=episode_id), owner=self.owner, stop=self.stop)

    def _submit(self, work: tuple[str, int, int], function, **kwargs) -> None:
        self.active[self.pool.submit(in_own_connection, function, **kwargs)] = work

    def collect(self) -> None:
        finished, _ = wait(list(self.active), timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
        for future in finished:
            kind, object_id, duel_id = self.active.pop(future)
            error = future.exception()
            if isinstance(error, CostCapReached) and kind == "duel":
                duel_cancel(duel=Duel.objects.get(pk=object_id), reason=str(error))
            elif (isinstance(error, SandboxUnavailable) and kind == "duel"
                  and not available_backends()):
                # No sandbox works on this machine: retrying cannot help, so say so and stop.
                duel_fail(duel=Duel.objects.get(pk=object_id), reason=str(error))
            elif kind == "duel" and fault_kind(error) == INFRASTRUCTURE:
                duel_authoring_infra_fault(duel_id=object_id, owner=self.owner, error=error)
            elif error is not None:
                # The lease runs out and another driver (or this one) resumes the work.
                logger.error("%s %s stopped with an error", kind, object_id, exc_info=error)
            duel_finalize_if_complete(duel=Duel(pk=duel_id))  # it reads the duel's row itself


def work_drive(
    *, tournament: Tournament | None = None, duel: Duel | None = None, concurrency: int = 4,
    stop: threading.Event | None = None, owner: str | None = None,
) -> bool:
    """Drive the scope until all its duels are done; return False if stopped early by `stop`."""
    doorbell_warm()  # ready long before the first episode's first step rings it
    scope = _Scope(tournament=tournament, duel=duel)
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
                    tournament_progress_refresh(tournament=tournament)
                    continue
                _finalize_finished_duels(scope)
                tournament_progress_refresh(tournament=tournament)
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
    if tournament is not None:
        tournament_finalize_if_complete(tournament=tournament)
    return scope.done()


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
