"""What an episode asks of its duel before each model call, read once for all its episodes.

Before every model call an episode checks that its duel still runs (a cancelled or failed duel's
episodes stop at their next step) and that no cost cap is spent. A tournament's episodes ask
several times a second each; in one process, the episodes of a duel share one read of it for
`FRESH_SECONDS` (duels/engine/shared_reads.py). Whatever this process does that changes the
answer, it forgets at once: spending (`duel_state_forget(duel_id=…, tournament_id=…)` after a
cost is stored) and ending a duel. So a cap this process's own calls reach is seen at the next
call, as with a read per call; another process's cancelling or spending within `FRESH_SECONDS`.
"""

from __future__ import annotations

from typing import Any

from duels.engine.costs import DUEL_SPEND_FIELDS
from duels.engine.shared_reads import SharedReads
from duels.models import Duel

FRESH_SECONDS = 0.25


def _read(duel_id: int) -> dict[str, Any] | None:
    return (Duel.objects.filter(pk=duel_id)
            .values("status", "tournament_id", *DUEL_SPEND_FIELDS).first())


_shared = SharedReads(read=_read, fresh_seconds=FRESH_SECONDS)
_reads = _shared.reads  # duel id -> (monotonic time, its row)


def duel_state_read(*, duel_id: int) -> dict[str, Any] | None:
    """The duel's status, tournament and DUEL_SPEND_FIELDS (None for a duel that is gone):
    this process's read of the last FRESH_SECONDS, or a new one."""
    return _shared.get(duel_id)


def duel_state_forget(*, duel_id: int | None = None, tournament_id: int | None = None) -> None:
    """Drop this process's reads of the duel and of every duel of the tournament (the next
    question reads the database); with neither given, drop them all."""
    if duel_id is None and tournament_id is None:
        _shared.forget()
        return
    _shared.forget(key=duel_id, where=(
        (lambda row: row["tournament_id"] == tournament_id) if tournament_id else None))
