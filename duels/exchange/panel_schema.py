"""Panels in the `envduels.v1` exchange file: `panel`, `panel_entry` and `outside_outcome` records.

A panel record names the panel (`name`, `manifest_sha256`, `origin`); each of its versions is a
`panel_entry` record referring to the panel, its environment and its hints, with the frozen
class file, seeds and hints; `outside_outcome` records are its imported pass/fail results (no
transcript). An import checks each entry's `source_sha256` against its class file and, once the
whole file is read, that a new panel's entries give its stated manifest hash
(duels/panels/manifest.py): a panel changed after export is refused, naming its line.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.db import models

from duels.exchange.errors import ExchangeImportError
from duels.exchange.fields import Field, _f, _ref
from duels.models import OutcomeStatus, OutsideOutcome, Panel, PanelEntry, PanelOrigin
from duels.panels.manifest import HINT_KEYS, ManifestRow, manifest_sha256
from duels.panels.v1_read import MAX_FILE_BYTES

PANEL_SCHEMA: dict[str, tuple[Field, ...]] = {
    "panel": (
        _f("name", "str"),
        _f("manifest_sha256", "str"),
        _f("origin", "str", choices=tuple(PanelOrigin.values)),
        _f("created_at", "time"),
    ),
    "panel_entry": (
        _ref("panel", "panel"),
        _f("position", "int", minimum=0),
        _f("entry_id", "str"),
        _ref("environment", "environment"),
        _f("author", "str"),
        _f("domain", "str"),
        _f("split", "str"),
        _f("class_source", "str"),
        _f("source_sha256", "str"),
        _f("class_name", "str"),
        _f("max_turns", "int", minimum=1),
        _f("benchmark_seeds", "list"),
        _f("hints", "object"),
        _ref("hint_1", "hint", nullable=True),
        _ref("hint_2", "hint", nullable=True),
    ),
    "outside_outcome": (
        _ref("panel", "panel"),
        _ref("entry", "panel_entry"),
        _f("model", "str"),
        _f("hinted", "bool"),
        _f("seed", "int"),
        _f("episode", "int"),
        _f("trial", "int"),
        _f("status", "str", choices=tuple(OutcomeStatus.values)),
        _f("reported_status", "str"),
        _f("hint_level", "int", minimum=1),
    ),
}
PANEL_MODELS: dict[str, type[models.Model]] = {
    "panel": Panel, "panel_entry": PanelEntry, "outside_outcome": OutsideOutcome,
}
PANEL_KINDS = tuple(PANEL_SCHEMA)


def _fail(message: str, line: int):
    raise ExchangeImportError(message, line=line)


def panel_record_check(record: dict[str, Any], line: int) -> None:
    """Refuse a panel entry whose class file, seeds or hints could not have been frozen here."""
    if record["kind"] != "panel_entry":
        return
    source = record["class_source"].encode("utf-8")
    if len(source) > MAX_FILE_BYTES:
        _fail(f"field 'class_source' is over {MAX_FILE_BYTES:,} bytes", line)
    if hashlib.sha256(source).hexdigest() != record["source_sha256"]:
        _fail("field 'source_sha256' is not the SHA-256 of 'class_source'", line)
    seeds = record["benchmark_seeds"]
    if not seeds or not all(type(seed) is int and 0 <= seed < 2**63 for seed in seeds):
        _fail("field 'benchmark_seeds' must be a non-empty list of integers", line)
    hints = record["hints"]
    if hints and (set(hints) not in [set(keys) for keys in HINT_KEYS]
                  or not all(isinstance(text, str) for text in hints.values())):
        _fail("field 'hints' must be {}, {\"hint\"} or {\"hint_1\", \"hint_2\"}", line)
    if record["max_turns"] > 200:
        _fail("field 'max_turns' is at most 200", line)


def panel_record_build(record: dict[str, Any], *,
                       pk: Callable[[str, str | None], int | None]) -> models.Model:
    """The unsaved row of a panel, panel entry or outside outcome record."""
    kind, uuid = record["kind"], UUID(record["uuid"])
    plain = {spec.name: record[spec.name] for spec in PANEL_SCHEMA[kind]
             if spec.type not in ("ref", "time")}
    refs = {f"{spec.name}_id": pk(spec.ref, record[spec.name]) for spec in PANEL_SCHEMA[kind]
            if spec.type == "ref"}
    return PANEL_MODELS[kind](uuid=uuid, **plain, **refs)


class PanelChecks:
    """What is checked once the whole file is read: each new panel's manifest hash."""

    def __init__(self) -> None:
        self.panels: dict[str, tuple[int, str]] = {}
        self.entries: dict[str, list[tuple[int, ManifestRow]]] = defaultdict(list)

    def remember(self, record: dict[str, Any], line: int) -> None:
        if record["kind"] == "panel":
            self.panels[record["uuid"]] = (line, record["manifest_sha256"])
        elif record["kind"] == "panel_entry":
            self.entries[record["panel"]].append((record["position"], ManifestRow(
                id=record["entry_id"], author=record["author"] or None,
                domain=record["domain"], split=record["split"],
                source_sha256=record["source_sha256"], class_name=record["class_name"],
                max_turns=record["max_turns"], benchmark_seeds=tuple(record["benchmark_seeds"]),
                hints=dict(record["hints"]))))

    def finish(self, existing: set[str]) -> None:
        for uuid, (line, stated) in self.panels.items():
            if uuid in existing:
                continue
            rows = [row for _, row in sorted(self.entries.get(uuid, []), key=lambda x: x[0])]
            if manifest_sha256(rows) != stated:
                _fail(f"panel {uuid}: its entries in this file do not give its manifest hash "
                      f"{stated[:12]}… (a panel never changes: export it again)", line)
