"""Partial replies: the text of a reply still being written, rung to live viewers.

While a solver's reply streams in, `ReplyStreamer.update` receives the text so far and rings a
`reply.partial` doorbell to the episode's group at most `PARTIAL_MIN_INTERVAL` apart (about ten a
second). Nothing is stored: the step committed at the end replaces the partial text, and a viewer
that joins later simply sees the stored steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from duels.engine.doorbell import doorbell_reply_partial

PARTIAL_MIN_INTERVAL = 0.1  # seconds between two partial doorbells of one episode
PARTIAL_MAX_CHARS = 16_000  # longer replies show their last characters while they stream


class ReplyStreamer:
    """Throttles the partial text of step `index` of one episode onto the doorbell."""

    def __init__(
        self,
        *,
        episode_uuid: str,
        index: int,
        ring: Callable[..., None] = doorbell_reply_partial,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.episode_uuid = episode_uuid
        self.index = index
        self.ring = ring
        self.clock = clock
        self.last_sent = float("-inf")
        self.rung = 0

    def update(self, text: str, thinking: str) -> None:
        """Ring the reply so far unless the last ring was under PARTIAL_MIN_INTERVAL ago; a
        restart (empty text and thinking, a retried stream) always rings, so viewers clear."""
        now = self.clock()
        restart = not text and not thinking
        if not restart and now - self.last_sent < PARTIAL_MIN_INTERVAL:
            return
        self.last_sent = now
        self.rung += 1
        self.ring(
            episode_uuid=self.episode_uuid,
            index=self.index,
            text=text[-PARTIAL_MAX_CHARS:],
            thinking=thinking[-PARTIAL_MAX_CHARS:],
        )
