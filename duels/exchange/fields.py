"""A record field of the `envduels.v1` schema (docs/exchange-format.md), shared by the schema's
modules: duels/exchange/export.py and the panels' records in duels/panels/exchange_records.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Field:
    """One record field: its JSON name, type, model path (for `.values()`), and constraints.

    Types: str, int, number, bool, time, object, tags (list of str), ref (uuid of `ref` kind),
    refs (list of uuids of `ref` kind), target (annotation target, kind given by target_kind),
    uuid (a plain uuid), list and json (any JSON list / value), names (people's plain names).
    """

    name: str
    type: str
    path: str = ""
    nullable: bool = False
    ref: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    # An optional field older files may lack: absent, it reads as `default`.
    optional: bool = False
    default: Any = None
    # Computed from other fields when written (an environment's `version`), checked on import.
    derived: bool = False


def _f(name: str, type_: str, path: str = "", **options: Any) -> Field:
    return Field(name=name, type=type_, path=path or name, **options)


def _ref(name: str, kind: str, *, nullable: bool = False, path: str = "") -> Field:
    return Field(name=name, type="ref", path=path or f"{name}__uuid", ref=kind, nullable=nullable)


