"""The duel as the owner of its episodes (duels/engine/owners.py): its state shared per process
(duel_state.py), its cost caps and its tournament's, its spend, and its failure when an episode
runs out of infrastructure tries."""

from __future__ import annotations

from typing import Any

from django.db.models import F

from duels.engine.costs import duel_spend_check
from duels.engine.duel_state import duel_state_forget, duel_state_read
from duels.engine.faults import infra_gave_up_reason
from duels.engine.owners import EpisodeOwner, episode_owner_register
from duels.models import Duel, Episode, Tournament


class DuelOwner(EpisodeOwner):
    key = "duel_id"
    noun = "duel"
    status_lookup = "duel__status"

    def state(self, *, owner_id: int) -> dict[str, Any] | None:
        return duel_state_read(duel_id=owner_id)

    def spend_check(self, *, state: dict[str, Any]) -> None:
        duel_spend_check(spend=state)

    def charge(self, *, episode: Episode, cost: float) -> None:
        Duel.objects.filter(pk=episode.duel_id).update(cost=F("cost") + cost)
        if episode.duel.tournament_id:
            Tournament.objects.filter(pk=episode.duel.tournament_id).update(
                cost=F("cost") + cost)

    def charged(self, *, episode: Episode) -> None:
        duel_state_forget(duel_id=episode.duel_id, tournament_id=episode.duel.tournament_id)

    def gave_up(self, *, episode: Episode, faults: int, error: str) -> None:
        # The duel cannot be scored without the episode: it ends failed, unscored.
        from duels.engine.duels import duel_fail

        duel_fail(duel=episode.duel, reason=infra_gave_up_reason(
            what=f"episode {episode.uuid}", faults=faults, error=error))


episode_owner_register(DuelOwner())
