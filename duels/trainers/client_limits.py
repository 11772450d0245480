"""What one client address may hold of the environment server (`manage.py serve_envs`): open
sessions (stateless resets included) and resets a minute. Pure bookkeeping, no I/O."""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from typing import Any


def client_address(scope: dict[str, Any]) -> str:
    """The peer's address (behind a proxy every client shares the proxy's)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class ClientLimits:
    """Slots and resets per client address."""

    def __init__(self, *, max_sessions: int, resets_per_minute: int,
                 clock=time.monotonic) -> None:
        self.max_sessions = max_sessions
        self.resets_per_minute = resets_per_minute
        self.clock = clock
        self.slots: Counter[str] = Counter()
        self.resets: dict[str, deque[float]] = {}  # each address's last minute of resets

    def refusal(self, client: str) -> str:
        """Why one more session from `client` is refused, or ""."""
        if self.slots[client] >= self.max_sessions:
            return (f"this address already has {self.max_sessions} sessions open "
                    "(--max-sessions-per-client); close one or retry later")
        return ""

    def take(self, client: str) -> None:
        self.slots[client] += 1

    def give_back(self, client: str) -> None:
        self.slots[client] -= 1
        if self.slots[client] <= 0:
            del self.slots[client]

    def reset_wait(self, client: str) -> int:
        """Count one reset of `client`; the seconds to wait instead (0 when it may reset)."""
        now = self.clock()
        recent = self.resets.setdefault(client, deque())
        while recent and recent[0] <= now - 60:
            recent.popleft()
        if len(recent) >= self.resets_per_minute:
            return max(1, math.ceil(recent[0] + 60 - now))
        recent.append(now)
        # Addresses whose minute is over are forgotten, so the table stays small.
        if len(self.resets) > 256:
            for address in [a for a, times in self.resets.items()
                            if not times or times[-1] <= now - 60]:
                del self.resets[address]
        return 0
