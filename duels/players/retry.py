"""Retries for model calls: exponential backoff with jitter, honouring `Retry-After`.

The SDKs' own retries are switched off (`max_retries=0`) so this policy is the only one applied.
Adapters run one HTTP attempt per call of `attempt()` and raise `TransientError` for what is worth
another try (429, 5xx, connection errors, timeouts) and a plain `PlayerError` for anything else.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from duels.players.base import PlayerError

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Defaults; each can be overridden per player in `params` under the same name.
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_BASE_S = 1.0
DEFAULT_BACKOFF_MAX_S = 30.0
DEFAULT_RETRY_AFTER_MAX_S = 60.0


class TransientError(PlayerError):
    """One attempt failed in a way another attempt may fix; `retry_after_s` is the server's wish."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after_s: float | None = None
    ):
        super().__init__(message, status=status, retryable=True)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class RetryPolicy:
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    backoff_base_s: float = DEFAULT_BACKOFF_BASE_S
    backoff_max_s: float = DEFAULT_BACKOFF_MAX_S
    retry_after_max_s: float = DEFAULT_RETRY_AFTER_MAX_S

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> RetryPolicy:
        """Read `timeout_s`, `max_retries`, `backoff_base_s`, ... from a player's params."""
        values: dict[str, Any] = {}
        for name, default in (
            ("timeout_s", DEFAULT_TIMEOUT_S),
            ("max_retries", DEFAULT_MAX_RETRIES),
            ("backoff_base_s", DEFAULT_BACKOFF_BASE_S),
            ("backoff_max_s", DEFAULT_BACKOFF_MAX_S),
            ("retry_after_max_s", DEFAULT_RETRY_AFTER_MAX_S),
        ):
            raw = params.get(name, default)
            try:
                value = int(raw) if name == "max_retries" else float(raw)
            except (TypeError, ValueError) as exc:
                raise PlayerError(f"player param {name} must be a number, got {raw!r}") from exc
            if value < 0 or (name == "timeout_s" and value == 0):
                raise PlayerError(f"player param {name} must be positive, got {raw!r}")
            values[name] = value
        return cls(**values)

    def backoff_s(self, retry_number: int) -> float:
        """Delay before retry `retry_number` (1-based): base·2^(n-1), capped, with equal jitter."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (retry_number - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Parse `retry-after-ms`, or `Retry-After` as seconds or an HTTP date; None when absent."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def call_with_retries(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Run `attempt` until it succeeds; return (result, retries used) or raise a PlayerError.

    The final error keeps the last HTTP status and says how many tries were made.
    """
    retries = 0
    while True:
        try:
            return attempt(), retries
        except TransientError as error:
            tries = retries + 1
            if retries >= policy.max_retries:
                # Still retryable: the engine treats it as an infrastructure fault and tries
                # the whole step again later (duels/engine/faults.py).
                raise PlayerError(
                    f"{error} (gave up after {tries} {'try' if tries == 1 else 'tries'})",
                    status=error.status, retryable=True,
                ) from None
            retries += 1
            delay = policy.backoff_s(retries)
            if error.retry_after_s is not None:
                if error.retry_after_s > policy.retry_after_max_s:
                    raise PlayerError(
                        f"{error}; the server asks to wait {error.retry_after_s:.0f} s, "
                        f"longer than this player waits (params.retry_after_max_s = "
                        f"{policy.retry_after_max_s:g} s)",
                        status=error.status, retryable=True,
                    ) from None
                delay = error.retry_after_s
            logger.warning(
                "%s; retry %d of %d in %.2f s", error, retries, policy.max_retries, delay
            )
            sleep(delay)
