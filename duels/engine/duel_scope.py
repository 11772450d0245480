"""Tournaments and lone duels as runs of the work loop (scopes.py): a duel is the unit of
authoring, its episodes are played once both sides are written, and it is scored and finished
when its last episode ends."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet, Subquery

from duels.engine.duels import (
    duel_author,
    duel_authoring_infra_fault,
    duel_cancel,
    duel_fail,
    duel_finalize_if_complete,
)
from duels.engine.leases import claimable_authoring, claimable_episodes, duel_claim_authoring
from duels.engine.scopes import Candidate, WorkScope
from duels.engine.tournaments import tournament_finalize_if_complete, tournament_progress_refresh
from duels.models import DONE_STATUSES, Duel, Episode, Status, Tournament


class DuelScope(WorkScope):
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

    def lock(self) -> None:
        if self.tournament is not None:
            Tournament.objects.select_for_update().filter(pk=self.tournament.pk).first()

    def cancelled(self) -> bool:
        if self.tournament is not None:
            return Tournament.objects.filter(pk=self.tournament.pk,
                                             status=Status.CANCELLED).exists()
        return Duel.objects.filter(pk=self.duel.pk, status=Status.CANCELLED).exists()

    def done(self) -> bool:
        return not self.duels().exclude(status__in=DONE_STATUSES).exists()

    def progress_refresh(self) -> None:
        tournament_progress_refresh(tournament=self.tournament)

    def finalize_finished(self) -> None:
        """Finish duels whose last episode ended (also after a worker died before scoring)."""
        open_episodes = Q(episodes__status__in=[Status.PENDING, Status.RUNNING])
        for duel in self.duels().filter(status=Status.RUNNING,
                                        lease_expires_at__isnull=True).exclude(
                open_episodes).distinct():
            duel_finalize_if_complete(duel=duel)

    def finish(self) -> None:
        if self.tournament is not None:
            tournament_finalize_if_complete(tournament=self.tournament)

    def authoring_candidates(self, *, now: datetime) -> QuerySet[Duel]:
        """In observe mode only the earliest unfinished round's duels may be authored."""
        candidates = self.duels().filter(claimable_authoring(now=now))
        if self.observe:
            open_round = (self.duels().exclude(status__in=DONE_STATUSES)
                          .order_by("round_index").values("round_index")[:1])
            candidates = candidates.filter(round_index=Subquery(open_round))
        return candidates.order_by("round_index", "id")

    def authoring_held(self, *, now: datetime) -> QuerySet[Duel]:
        # Work waiting out an infrastructure fault's backoff has no owner and takes no slot.
        return self.duels().filter(status=Status.RUNNING,
                                   lease_expires_at__gte=now).exclude(lease_owner="")

    def authoring_claim(self, *, unit_id: int, owner: str) -> bool:
        return duel_claim_authoring(duel_id=unit_id, owner=owner)

    def author(self, *, unit_id: int, owner: str) -> None:
        duel_author(duel=Duel(pk=unit_id), owner=owner, claimed=True)

    def authoring_cost_capped(self, *, unit_id: int, reason: str) -> None:
        duel_cancel(duel=Duel.objects.get(pk=unit_id), reason=reason)

    def authoring_impossible(self, *, unit_id: int, reason: str) -> None:
        duel_fail(duel=Duel.objects.get(pk=unit_id), reason=reason)

    def authoring_infra_fault(self, *, unit_id: int, owner: str, error: BaseException) -> None:
        duel_authoring_infra_fault(duel_id=unit_id, owner=owner, error=error)

    def episode_candidates(self, *, now: datetime) -> list[Candidate]:
        return list(
            self.episodes().filter(claimable_episodes(now=now), duel__status=Status.RUNNING)
            .values_list("pk", "duel_id", "environment_id", "duel__round_index", "status"))

    def work_ended(self, *, unit_id: int) -> None:
        duel_finalize_if_complete(duel=Duel(pk=unit_id))  # it reads the duel's row itself
