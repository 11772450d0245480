"""One process's shared, short-lived reads of a row that many threads ask about.

Before every model call an episode asks whoever owns it (its duel, its study …) whether it still
runs and whether a cost cap is spent. A busy run's episodes ask several times a second each; in
one process they share one read of the row for `fresh_seconds`. Whatever this process does that
changes the answer (spending, ending the run) it forgets at once, so a cap its own calls reach is
seen at the next call, another process's change within `fresh_seconds`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

KEPT = 512  # rows remembered at most; older reads are dropped first


class SharedReads:
    """Reads of rows by id through `read(id) -> dict | None`, shared for `fresh_seconds`."""

    def __init__(self, *, read: Callable[[int], dict[str, Any] | None],
                 fresh_seconds: float) -> None:
        self._read = read
        self.fresh_seconds = fresh_seconds
        self._lock = threading.Lock()
        self.reads: dict[int, tuple[float, dict[str, Any]]] = {}  # id -> (monotonic time, row)
        self._generation = 0  # counts forgets: a read that raced one is not kept

    def get(self, key: int) -> dict[str, Any] | None:
        """The row's fields (a copy each asker may change), None for a row that is gone."""
        now = time.monotonic()
        with self._lock:
            kept = self.reads.get(key)
            if kept is not None and now - kept[0] < self.fresh_seconds:
                return dict(kept[1])
            generation = self._generation
        row = self._read(key)
        with self._lock:
            if row is None:
                self.reads.pop(key, None)
            elif generation == self._generation:
                # A forget while the query ran may have changed what it saw: keep a clean read.
                self.reads[key] = (now, row)
                if len(self.reads) > KEPT:
                    ordered = sorted(self.reads, key=lambda kept_id: self.reads[kept_id][0])
                    for oldest in ordered[:len(self.reads) // 2]:
                        del self.reads[oldest]
        return dict(row) if row is not None else None

    def forget(self, *, key: int | None = None,
               where: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """Drop the read of `key` and every read whose row matches `where`; with neither
        given, drop them all."""
        with self._lock:
            self._generation += 1
            if key is None and where is None:
                self.reads.clear()
                return
            for kept_id, (_, row) in list(self.reads.items()):
                if kept_id == key or (where is not None and where(row)):
                    del self.reads[kept_id]
