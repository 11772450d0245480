"""A run the work loop drives, as the loop sees it: units of authoring and episodes to claim.

The loop in scheduler.py knows no kind of run. A tournament (or a lone duel: duel_scope.py), a
study (duels/studies/scope.py) or any later kind hands it work through this interface: which
authoring units may be claimed and who holds them, how one is claimed and authored, which
episodes may be played and in what order, and what to do when a unit or an episode ends. Claims
stay conditional UPDATEs on the database (leases.py), so any number of drivers in any number of
processes may drive one run.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from duels.models import Episode

# (episode id, its unit's id, its environment's id, its round, its status): what the loop needs
# of a claimable episode to order the claims (scheduler._claim_order).
Candidate = tuple[int, int, int, int, str]


class WorkScope:
    """One run's work. Subclasses answer every method; the loop calls nothing else."""

    # --- the run as a whole ---------------------------------------------------------------
    def lock(self) -> None:
        """Serialise claims across drivers (lock the run's row) so the limits hold run-wide."""

    def cancelled(self) -> bool:
        raise NotImplementedError

    def done(self) -> bool:
        """Every unit of the run has ended."""
        raise NotImplementedError

    def progress_refresh(self) -> None:
        """Store the run's progress figures when they changed."""

    def finalize_finished(self) -> None:
        """Finish units whose work all ended (also after a worker died right before)."""

    def finish(self) -> None:
        """The loop is over: finish the run itself when it is complete."""

    # --- authoring --------------------------------------------------------------------------
    def authoring_candidates(self, *, now: datetime) -> QuerySet:
        """Units whose authoring may be claimed now, in the order to claim them."""
        raise NotImplementedError

    def authoring_held(self, *, now: datetime) -> QuerySet:
        """Units some driver is authoring under a live lease (they count against the limit)."""
        raise NotImplementedError

    def authoring_claim(self, *, unit_id: int, owner: str) -> bool:
        """Claim one unit's authoring for `owner`; True for exactly one racing driver."""
        raise NotImplementedError

    def author(self, *, unit_id: int, owner: str) -> None:
        """Author a claimed unit (runs in a worker thread with its own connection)."""
        raise NotImplementedError

    def authoring_cost_capped(self, *, unit_id: int, reason: str) -> None:
        """A cost cap stopped the unit's authoring."""
        raise NotImplementedError

    def authoring_impossible(self, *, unit_id: int, reason: str) -> None:
        """The unit cannot be authored on this machine at all (no sandbox works): end it."""
        raise NotImplementedError

    def authoring_infra_fault(self, *, unit_id: int, owner: str, error: BaseException) -> None:
        """Hand the unit back after an infrastructure fault (retried after a backoff)."""
        raise NotImplementedError

    # --- episodes ---------------------------------------------------------------------------
    def episodes(self) -> QuerySet[Episode]:
        """Every episode of the run."""
        raise NotImplementedError

    def episode_candidates(self, *, now: datetime) -> list[Candidate]:
        """The run's claimable episodes whose unit is being played."""
        raise NotImplementedError

    def work_ended(self, *, unit_id: int) -> None:
        """A piece of the unit's work ended (its authoring or one of its episodes)."""
        raise NotImplementedError
