"""A clock for the sandbox session that stands for slow models without waiting for them."""

from __future__ import annotations

import threading
import time


class JumpingClock:
    """The real monotonic clock plus jumps made by the calling thread: `jump(45)` stands for a
    model thinking 45 s before its reply. Each thread (one episode) keeps its own jumps, so
    episodes running side by side never move each other's clocks."""

    def __init__(self) -> None:
        self.local = threading.local()

    def __call__(self) -> float:
        return time.monotonic() + getattr(self.local, "offset", 0.0)

    def jump(self, seconds: float) -> None:
        self.local.offset = getattr(self.local, "offset", 0.0) + seconds
