"""What model calls cost, and the caps that stop further calls.

The engine prices every completion with `completion_cost` (cached prompt tokens at the player's
cache prices) and, before each new call, checks the duel's and the tournament's running totals
with `cost_cap_check`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from duels.players.base import Completion, PlayerError

if TYPE_CHECKING:
    from duels.models import Player


class CostCapReached(PlayerError):
    """A cost cap has been reached; no further model calls may start under it."""

    def __init__(self, message: str, *, spent: float, cap: float) -> None:
        super().__init__(message)
        self.spent = spent
        self.cap = cap


def completion_cost(*, player: Player, completion: Completion) -> float:
    """Return the USD cost of `completion` at `player`'s prices (per 1M tokens), its prompt
    tokens read from or written to the provider's cache at the cache prices."""
    return player.cost_of(
        input_tokens=completion.input_tokens,
        output_tokens=completion.output_tokens,
        cache_read_tokens=completion.cache_read_tokens,
        cache_write_tokens=completion.cache_write_tokens,
    )


def cost_cap_check(*, spent: float, cap: float | None, scope: str = "cost cap") -> None:
    """Raise CostCapReached once `spent` has reached `cap` (None means no cap).

    Nothing spent is never over a cap, so free (built-in) players are never stopped, and a cap of
    0 lets no paid call follow the first one. `scope` names the cap in the message, e.g.
    "duel cost cap" or "tournament cost cap".
    """
    if cap is None:
        return
    if cap < 0:
        raise ValueError(f"a cost cap cannot be negative, got {cap}")
    if spent > 0 and spent >= cap:
        raise CostCapReached(
            f"{scope} reached: ${spent:.4f} spent of ${cap:.4f}; no further model calls",
            spent=spent,
            cap=cap,
        )


# What a cost-cap check reads of a duel, its tournament's spend included, in one query.
DUEL_SPEND_FIELDS = ("cost", "cost_cap", "tournament__cost", "tournament__cost_cap")


def duel_spend_check(*, spend: dict) -> None:
    """Raise CostCapReached when a row of DUEL_SPEND_FIELDS shows a cap spent."""
    cost_cap_check(spent=spend["cost"], cap=spend["cost_cap"], scope="duel cost cap")
    cost_cap_check(spent=spend["tournament__cost"] or 0, cap=spend["tournament__cost_cap"],
                   scope="tournament cost cap")
