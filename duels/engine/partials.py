"""Partial replies: the text of a reply still being written, rung to live viewers.

While a solver's reply streams in, `ReplyStreamer.update` receives the text so far and rings a
`reply.partial` doorbell to the episode's group at most once per `PARTIAL_MIN_INTERVAL` (about
ten a second); the last text of a burst follows when the interval is over, so a model that
pauses mid-reply is shown as far as it got. Nothing is stored: the step committed at the end
replaces the partial text, and a viewer that joins later simply sees the stored steps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from duels.engine.doorbell import doorbell_reply_partial

PARTIAL_MIN_INTERVAL = 0.1  # seconds between two partial doorbells of one episode
PARTIAL_MAX_CHARS = 16_000  # longer replies show their last characters while they stream


class ReplyStreamer:
    """Throttles the partial text of step `index` of one episode onto the doorbell.

    Use as a context manager (or call `close`) so a trailing ring still waiting is dropped
    once the reply is complete.
    """

    def __init__(
        self,
        *,
        episode_uuid: str,
        index: int,
        ring: Callable[..., None] = doorbell_reply_partial,
        interval: float | None = None,
    ) -> None:
        self.episode_uuid = episode_uuid
        self.index = index
        self.ring = ring
        self.interval = PARTIAL_MIN_INTERVAL if interval is None else interval
        self.rung = 0
        self._last_sent = float("-inf")
        self._pending: tuple[str, str] | None = None
        self._timer: threading.Timer | None = None
        self._closed = False
        self._lock = threading.Lock()

    def __enter__(self) -> ReplyStreamer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def update(self, text: str, thinking: str) -> None:
        """Ring the reply so far now, or when the interval since the last ring is over. A
        restart (empty text and thinking: a retried stream) rings at once, so viewers clear."""
        with self._lock:
            if self._closed:
                return
            self._pending = (text, thinking)
            wait = self._last_sent + self.interval - time.monotonic()
            if wait <= 0 or not (text or thinking):
                self._cancel_timer()
                self._send()
            elif self._timer is None:
                self._start_timer(wait)

    def close(self) -> None:
        """The reply is complete: no further rings (the stored step replaces the text)."""
        with self._lock:
            self._closed = True
            self._pending = None
            self._cancel_timer()

    def _start_timer(self, wait: float) -> None:
        self._timer = threading.Timer(wait, self._trailing)
        self._timer.daemon = True
        self._timer.start()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _trailing(self) -> None:
        with self._lock:
            if threading.current_thread() is not self._timer:
                return  # cancelled after it had started waiting for the lock
            self._timer = None
            if self._closed or self._pending is None:
                return
            wait = self._last_sent + self.interval - time.monotonic()
            if wait > 0:  # a direct ring went out meanwhile
                self._start_timer(wait)
            else:
                self._send()

    def _send(self) -> None:
        """Ring the pending text (the caller holds the lock)."""
        text, thinking = self._pending or ("", "")
        self._pending = None
        self._last_sent = time.monotonic()
        self.rung += 1
        self.ring(
            episode_uuid=self.episode_uuid,
            index=self.index,
            text=text[-PARTIAL_MAX_CHARS:],
            thinking=thinking[-PARTIAL_MAX_CHARS:],
        )
