"""A stored duel's scores, derived from its stored episodes by the one scoring rule.

Beside `duels/scoring.py` (the pure rule) because every writer that changes a duel's episodes
needs it: the engine when a duel finishes, the importer after an import. Neither reaches into
the other for it.
"""

from __future__ import annotations

from duels.models import Condition, Duel, EndReason, Episode, Status
from duels.scoring import DuelScore, duel_score_from_episodes, episode_passed

SCORE_FIELDS = ("p_unhinted", "p_hinted", "setter_score", "flips")


def duel_score_stored(*, duel: Duel) -> DuelScore:
    """Score the duel from its forfeit and void flags and stored episodes (the one scoring
    rule)."""
    # Only results count: an episode still to play, cancelled, or ended by an infrastructure
    # fault is no one's result, so a side none of whose episodes ended has no pass rate (null),
    # never 0.0.
    episodes = Episode.objects.filter(duel=duel).exclude(
        status__in=(Status.PENDING, Status.RUNNING, Status.CANCELLED)).exclude(
        end_reason=EndReason.INFRA_ERROR).values_list(
        "environment_id", "condition", "seed", "status", "success")
    return duel_score_from_episodes(
        forfeit_a=bool(duel.forfeit_a), forfeit_b=bool(duel.forfeit_b),
        env_a=duel.env_a_id, env_b=duel.env_b_id,
        void_a=bool(duel.void_a), void_b=bool(duel.void_b),
        episodes=((environment_id, condition == Condition.HINTED, seed,
                   episode_passed(status=status, success=success))
                  for environment_id, condition, seed, status, success in episodes),
    )


def duel_rescore(*, duel: Duel) -> Duel:
    """Recompute pass rates, setter scores, flips and the outcome from the stored episodes."""
    duel.refresh_from_db()
    score = duel_score_stored(duel=duel)
    for side in ("a", "b"):
        for name in SCORE_FIELDS:
            setattr(duel, f"{name}_{side}", getattr(score.side(side), name))
    duel.outcome = score.outcome
    duel.save(update_fields=[f"{name}_{side}" for side in ("a", "b") for name in SCORE_FIELDS]
              + ["outcome"])
    return duel
