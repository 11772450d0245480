"""What an episode asks of its duel before each model call, read once for all its episodes.

Before every model call an episode checks that its duel still runs (a cancelled or failed duel's
episodes stop at their next step) and that no cost cap is spent. A tournament's episodes ask
several times a second each; in one process, the episodes of a duel share one read of it for
`FRESH_SECONDS`. Whatever this process does that changes the answer, it forgets at once: spending
(`duel_state_forget(duel_id=…, tournament_id=…)` after a cost is stored) and ending a duel. So a
cap this process's own calls reach is seen at the next call, as with a read per call; another
process's cancelling or spending within `FRESH_SECONDS`.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from duels.engine.costs import DUEL_SPEND_FIELDS
from duels.models import Duel

FRESH_SECONDS = 0.25
_KEPT = 512  # duels remembered at most; older reads are dropped first

_lock = threading.Lock()
_reads: dict[int, tuple[float, dict[str, Any]]] = {}  # duel id -> (monotonic time, its row)
_generation = 0  # counts forgets: a read that raced one is not kept


def duel_state_read(*, duel_id: int) -> dict[str, Any] | None:
    """The duel's status, tournament and DUEL_SPEND_FIELDS (None for a duel that is gone):
    this process's read of the last FRESH_SECONDS, or a new one."""
    now = time.monotonic()
    with _lock:
        kept = _reads.get(duel_id)
        if kept is not None and now - kept[0] < FRESH_SECONDS:
            return dict(kept[1])
        generation = _generation
    row = (Duel.objects.filter(pk=duel_id)
           .values("status", "tournament_id", *DUEL_SPEND_FIELDS).first())
    with _lock:
        if row is None:
            _reads.pop(duel_id, None)
        elif generation == _generation:
            # A forget while the query ran may have changed what it saw: keep only a clean read.
            _reads[duel_id] = (now, row)
            if len(_reads) > _KEPT:
                for oldest in sorted(_reads, key=lambda key: _reads[key][0])[:len(_reads) // 2]:
                    del _reads[oldest]
    return dict(row) if row is not None else None


def duel_state_forget(*, duel_id: int | None = None, tournament_id: int | None = None) -> None:
    """Drop this process's reads of the duel and of every duel of the tournament (the next
    question reads the database); with neither given, drop them all."""
    global _generation
    with _lock:
        _generation += 1
        if duel_id is None and tournament_id is None:
            _reads.clear()
            return
        for kept_id, (_, row) in list(_reads.items()):
            if kept_id == duel_id or (tournament_id and row["tournament_id"] == tournament_id):
                del _reads[kept_id]
