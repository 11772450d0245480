"""Kinds of run that background drivers work on, beside tournaments and lone duels.

Each kind (a study …) registers how to find its open runs and which task drives one; the stale
sweep (workers.py) and the check for drivers already queued (queue.py) read this registry, so a
run of any kind whose worker died is handed to a new driver the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db.models import Model, Q


@dataclass(frozen=True)
class OpenRun:
    """A run that still has work: its uuid, its episodes, and its leased authoring units."""

    uuid: str
    episodes: Q
    units: tuple[tuple[type[Model], Q], ...]


@dataclass(frozen=True)
class RunKind:
    """`task` (a registered task's name) drives one run, given `{kwarg: its uuid}`;
    `open_runs()` lists the runs of this kind that are running."""

    name: str
    task: str
    kwarg: str
    open_runs: Callable[[], Iterable[OpenRun]]


_kinds: dict[str, RunKind] = {}


def run_kind_register(kind: RunKind) -> None:
    _kinds[kind.name] = kind


def run_kinds() -> list[RunKind]:
    return list(_kinds.values())
