"""Plain records the analytics functions take: no ORM objects, only names, uuids and numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class DuelRecord(NamedTuple):
    """A finished duel as it recorded itself: environments (None when never written), forfeit
    flags and void flags (voided after play); whether a side was played follows from these and
    its episodes."""

    key: int
    uuid: str
    a: str
    b: str
    env_a: str | None
    env_b: str | None
    observe: bool
    forfeit_a: bool = False
    forfeit_b: bool = False
    void_a: bool = False
    void_b: bool = False


class EpisodeRecord(NamedTuple):
    """One ended solver attempt; `success` is whether it passed (`duels.scoring.episode_passed`)."""

    duel: int | None
    environment: str
    solver: str
    hinted: bool
    seed: int
    success: bool


class ComplianceRecord(NamedTuple):
    """How many of a solver's replies in one condition were answered, and how many of them had
    no readable action (a format error)."""

    solver: str
    hinted: bool
    replies: int
    format_errors: int


class EnvironmentRecord(NamedTuple):
    """One environment row; `content_hash` is its design key (empty: a design of its own) and
    `authors` every author of the design once records are merged (`design_records`)."""

    uuid: str
    title: str
    author: str | None
    valid: bool
    source: str
    hints: tuple[str, ...] = ()
    reset_text: str = ""
    content_hash: str = ""
    authors: tuple[str, ...] = ()
    # From the validation report stored here: one was run, reset texts were the same in fresh
    # sandboxes, and the reference solution (when there is one) replayed to success.
    validated: bool = False
    deterministic: bool = False
    reference_solved: bool = False
    # The flywheel's period: the tournament round or ISO week of the duel that first played
    # it (else of its own creation), and when it was created (ISO 8601).
    period: str = ""
    created_at: str = ""
    # Voided after play: replayed differently, or showed its hint (duels.engine.proof).
    voided: bool = False


class TransferRecord(NamedTuple):
    learner: str
    environment: str | None
    author: str | None
    benchmark: str
    before: float
    after: float


@dataclass(frozen=True)
class AnalyticsInput:
    """Everything the figures are computed from."""

    players: tuple[str, ...] = ()
    duels: tuple[DuelRecord, ...] = ()
    episodes: tuple[EpisodeRecord, ...] = ()
    environments: tuple[EnvironmentRecord, ...] = ()
    transfers: tuple[TransferRecord, ...] = field(default_factory=tuple)
    # Model size in billions of parameters, for the players whose size is known.
    sizes: tuple[tuple[str, float], ...] = ()
    compliance: tuple[ComplianceRecord, ...] = ()
