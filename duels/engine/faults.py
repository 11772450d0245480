"""Every way a piece of engine work can break, sorted into the two kinds that matter.

- **Environment faults** are the setter's responsibility: the environment's code raised, broke
  the guest protocol, ended or crashed its own process (EnvCrashed: exited, killed itself,
  segfaulted), ran past its time, memory or output limits, or replayed differently from its
  stored steps. The episode ends and counts as not passed (the documented scoring rule).
- **Infrastructure faults** are nobody's result: the model provider still failing after the
  player's retries, the sandbox backend gone or killed from outside, the database connection
  lost. The work is handed back with a backoff and resumed from its stored steps, up to
  `infra_max_tries()` tries; past that its duel ends `failed` with the reason, unscored.

A worker that dies outright is an infrastructure fault too; its lease runs out and another
worker resumes the work (see leases.py), without counting against the tries.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, InterfaceError
from django.utils import timezone

from duels.players.base import PlayerError
from sandbox_runner import (
    EnvCodeError,
    SandboxError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
)

ENVIRONMENT = "environment"
INFRASTRUCTURE = "infrastructure"

# The sandbox errors that come from the environment's own code (ProtocolViolation, EnvCrashed
# and the engine's ReplayMismatch are EnvCodeErrors). Every other sandbox error - the backend is
# unavailable, the sandbox was killed from outside (SandboxCrashed) - is the infrastructure's.
ENVIRONMENT_ERRORS: tuple[type[SandboxError], ...] = (
    EnvCodeError, SandboxTimeout, SandboxMemoryExceeded, SandboxOutputExceeded,
)


def fault_kind(error: BaseException) -> str | None:
    """`ENVIRONMENT`, `INFRASTRUCTURE`, or None for an error that is neither (a bug: re-raise)."""
    if isinstance(error, ENVIRONMENT_ERRORS):
        return ENVIRONMENT
    if isinstance(error, (SandboxError, PlayerError, DatabaseError, InterfaceError)):
        return INFRASTRUCTURE
    return None


def fault_is_lasting(error: BaseException) -> bool:
    """True for an infrastructure fault that waiting cannot fix (a player's bad configuration
    or credentials): its work gives up at once instead of after every try."""
    return isinstance(error, PlayerError) and not error.retryable


def fault_describe(error: BaseException) -> str:
    """A one-line account of the fault for the episode's or the duel's error field."""
    text = str(error).strip() or "(no message)"
    return f"{type(error).__name__}: {text}"[:2000]


def infra_max_tries() -> int:
    """How many times one episode or one duel's authoring is tried through infrastructure faults."""
    return int(getattr(settings, "ENVDUELS_INFRA_MAX_TRIES", 5))


def infra_backoff_seconds(*, faults: int) -> float:
    """The wait before try `faults + 1`: the base doubled per fault so far, capped."""
    base = float(getattr(settings, "ENVDUELS_INFRA_BACKOFF_SECONDS", 10))
    cap = float(getattr(settings, "ENVDUELS_INFRA_BACKOFF_MAX_SECONDS", 300))
    return min(cap, base * 2 ** max(0, faults - 1))


def infra_retry_at(*, faults: int) -> datetime:
    """When work that has now had `faults` infrastructure faults may be claimed again."""
    return timezone.now() + timedelta(seconds=infra_backoff_seconds(faults=faults))


def infra_gave_up_reason(
    *, what: str, faults: int, error: str,
    consequence: str = "the duel is left out of every score and rating",
) -> str:
    """The reason a duel (or a study's slot: `consequence`) ends failed once `what` ran out of
    tries."""
    tries = "try" if faults == 1 else "tries"
    return (f"infrastructure fault, not a result: {what} failed {faults} {tries} "
            f"(last: {error}); {consequence}")
