"""Built-in objects: what every installation makes for itself under the same uuid.

The built-in players (`seed_builtin`; uuid derived from the name) and the default rubric (a data
migration; fixed uuid) exist on every installation, made at different moments and possibly by
different releases. Two installations' copies are one object: an import that finds it stored
keeps the stored one, whatever the file says of its timestamps or wording, and every record
that refers to it points at the stored one; and an export writes it the same everywhere (its
creation time is the fixed BUILTIN_CREATED_AT, never the moment this installation made it), so
export → import into a fresh installation → export gives the same records. A new built-in
object is named here, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from duels.annotation_defaults import DEFAULT_RUBRIC_LINEAGE, DEFAULT_RUBRIC_UUID
from duels.models import builtin_player_uuid


def _builtin_player(record: dict[str, Any]) -> bool:
    return bool(record["builtin"]) and record["uuid"] == str(builtin_player_uuid(record["name"]))


def _default_rubric(record: dict[str, Any]) -> bool:
    return record["uuid"] == DEFAULT_RUBRIC_UUID and record["lineage"] == DEFAULT_RUBRIC_LINEAGE


# What an export says of a built-in object's creation time on every installation.
BUILTIN_CREATED_AT = "2025-01-01T00:00:00Z"

_BUILTIN: dict[str, Callable[[dict[str, Any]], bool]] = {
    "player": _builtin_player,
    "rubric": _default_rubric,
}


def builtin_kinds() -> tuple[str, ...]:
    """The record kinds that have built-in objects."""
    return tuple(_BUILTIN)


def builtin_record(record: dict[str, Any]) -> bool:
    """Whether an exchange record describes a built-in object."""
    check = _BUILTIN.get(record["kind"])
    return check is not None and check(record)


def builtin_same(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """The file's record and the stored one are the same built-in object (so: merge by uuid)."""
    return (mine["kind"] == theirs["kind"] and mine["uuid"] == theirs["uuid"]
            and builtin_record(mine) and builtin_record(theirs))


def builtin_exported(record: dict[str, Any]) -> dict[str, Any]:
    """The record as every installation exports it: a built-in object's creation time fixed."""
    if "created_at" in record and builtin_record(record):
        record["created_at"] = BUILTIN_CREATED_AT
    return record
