"""Record kinds another room adds to the `envduels.v1` file: the one registry the exchange owns.

The panels room registers its `panel`, `panel_entry` and `outside_outcome` kinds when Django
starts (duels/panels/exchange_records.py, imported by duels/apps.py); the exchange reads, checks,
validates and imports them through this registry and never imports the room that owns them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import models

from duels.exchange.fields import Field
from duels.exchange.schema import KIND_ORDER, MODELS, SCHEMA


class FileChecks(Protocol):
    """What a room checks once a whole file is read: it sees every record, then the file."""

    def remember(self, record: dict[str, Any], line: int) -> None: ...

    def finish(self, existing: Any) -> None: ...


@dataclass(frozen=True)
class RecordKinds:
    schema: dict[str, tuple[Field, ...]]  # kind -> its fields, in file order after the core kinds
    models: dict[str, type[models.Model]]
    check: Callable[[dict[str, Any], int], None]  # one record's own checks (raises on a fault)
    build: Callable[..., models.Model]  # record, pk= -> the unsaved row
    file_checks: Callable[[], FileChecks]


_owners: dict[str, RecordKinds] = {}
_registered: list[RecordKinds] = []


def record_kinds_register(kinds: RecordKinds) -> None:
    """Add `kinds` to the file format (their fields, models and order); once per kind."""
    if all(_owners.get(kind) is kinds for kind in kinds.schema):
        return
    clash = sorted(set(kinds.schema) & (set(SCHEMA) | set(_owners)))
    if clash:
        raise ValueError(f"record kinds already in the envduels.v1 format: {', '.join(clash)}")
    SCHEMA.update(kinds.schema)
    MODELS.update(kinds.models)
    KIND_ORDER.extend(kinds.schema)
    _owners.update(dict.fromkeys(kinds.schema, kinds))
    _registered.append(kinds)


def record_kind_owner(kind: str) -> RecordKinds | None:
    """The registered kinds `kind` belongs to, or None for the exchange's own kinds."""
    return _owners.get(kind)


def record_file_checks() -> list[FileChecks]:
    """A fresh whole-file checker of every registered room, for one file's validation."""
    return [kinds.file_checks() for kinds in _registered]
