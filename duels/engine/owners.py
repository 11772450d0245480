"""Who owns an episode, and what the solver loop asks of that owner.

An episode belongs to one run: a duel (`Episode.duel`), a study's field play (`Episode.study`),
or any later kind of run with a foreign key of its own on `Episode`. The solver loop, the step
writer and the fault handling in episodes.py never name a kind: they ask the episode's owner,
found here by the foreign key that is set, through the small interface below. Each kind
registers one `EpisodeOwner` when its module is imported (the app's `ready()` imports them):
the duel's lives in duels/engine/duel_owner.py, the study's in duels/studies/owner.py.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from duels.models import Episode, Status

# An owner in one of these states stops its episodes at their next step.
STOPPED_STATUSES = (Status.CANCELLED, Status.FAILED)


class EpisodeOwner:
    """What one kind of run answers for its episodes. Subclasses set `key` (the Episode
    attribute holding the owner's id, e.g. "duel_id") and `noun` (named in messages)."""

    key = ""
    noun = "run"
    # The lookup from an Episode to its owner's status (e.g. "duel__status").
    status_lookup = ""

    def owner_id(self, episode: Episode) -> int | None:
        return getattr(episode, self.key, None)

    def state(self, *, owner_id: int) -> dict[str, Any] | None:
        """The owner's status and whatever `spend_check` needs; None when it is gone.
        Asked before every model call: answer from a shared read (duels/engine/shared_reads)."""
        raise NotImplementedError

    def spend_check(self, *, state: dict[str, Any]) -> None:
        """Raise CostCapReached when a cap over this owner's spending is reached."""

    def charge(self, *, episode: Episode, cost: float) -> None:
        """Add a model call's cost to the owner's totals (inside the step's transaction)."""

    def charged(self, *, episode: Episode) -> None:
        """After the charge committed: forget this process's shared reads of the owner."""

    def gave_up(self, *, episode: Episode, faults: int, error: str) -> None:
        """The episode ended for good after `faults` infrastructure faults, the last `error`
        (never a result)."""

    def episode_ended(self, *, episode: Episode) -> None:
        """The episode has just ended (any status); the owner may take its next step."""

    def groups(self, *, episode: Episode) -> list[str]:
        """Channel-layer groups (besides the episode's own) told when the episode ends: those
        a page of the owner joins to follow it live (a study's `study.<uuid>`)."""
        return []


_owners: list[EpisodeOwner] = []


def episode_owner_register(owner: EpisodeOwner) -> None:
    """Register an owner kind (once per kind; registering its key again replaces it)."""
    _owners[:] = [known for known in _owners if known.key != owner.key]
    _owners.append(owner)


def episode_owner(episode: Episode) -> EpisodeOwner | None:
    """The owner kind of `episode` (the first whose key is set), or None for a lone episode."""
    for owner in _owners:
        if owner.owner_id(episode):
            return owner
    return None


def episodes_of_stopped_owners() -> list[tuple[EpisodeOwner, Q]]:
    """For each owner kind, the episodes whose owner has stopped (cancelled or failed)."""
    return [(owner, Q(**{f"{owner.status_lookup}__in": STOPPED_STATUSES}))
            for owner in _owners if owner.status_lookup]


def owner_stopped(state: dict[str, Any] | None) -> bool:
    """True when an owner's state says its episodes must stop (cancelled or failed)."""
    return bool(state) and state.get("status") in STOPPED_STATUSES
