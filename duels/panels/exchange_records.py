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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.db import models

from duels.bounds import HINT_CHARS
from duels.exchange.errors import ExchangeImportError
from duels.exchange.fields import Field, _f, _ref
from duels.exchange.identifiers import IdentifierError, entry_id_check
from duels.exchange.record_kinds import RecordKinds, record_kinds_register
from duels.exchange.untrusted import CLASS_FILE, SOURCE
from duels.models import (
    Contract,
    Environment,
    Evaluation,
    Hint,
    OutcomeStatus,
    OutsideOutcome,
    Panel,
    PanelEntry,
    PanelOrigin,
)
from duels.panels.manifest import HINT_KEYS, ManifestRow, hint_levels, manifest_sha256
from duels.panels.v1_read import MAX_SEEDS
from duels.trainers.envduels_v1 import generated_design

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


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def entry_played(record: dict[str, Any]) -> tuple[str, str]:
    """(source, contract) a panel entry plays: the design a class file EnvDuels generated
    carries, else the class file itself (as duels/panels/imports.py writes them)."""
    design, _ = generated_design(record["class_source"], record["class_name"])
    if design is not None:
        return design, Contract.ENVDUELS
    return record["class_source"], Contract.ENVDUELS_V1


def panel_record_check(record: dict[str, Any], line: int) -> None:
    """Refuse a panel entry whose id, class file, seeds or hints could not have been frozen
    here (the same rules as an envduels-v1 export's, duels/panels/v1_read.py)."""
    if record["kind"] != "panel_entry":
        return
    try:
        entry_id_check(record["entry_id"])
    except IdentifierError as error:
        _fail(f"panel entry {record['entry_id'][:120]!r}: {error}", line)
    label = f"panel entry {record['entry_id']}"
    source = record["class_source"].encode("utf-8", "surrogatepass")
    if len(source) > CLASS_FILE.limit:
        _fail(f"{label}: field 'class_source' is over {CLASS_FILE.limit:,} bytes", line)
    if hashlib.sha256(source).hexdigest() != record["source_sha256"]:
        _fail(f"{label}: field 'source_sha256' is not the SHA-256 of 'class_source'", line)
    played, _ = entry_played(record)
    if len(played.encode("utf-8", "surrogatepass")) > SOURCE.limit:
        _fail(f"{label}: the source it plays is over {SOURCE.limit // 1024} KiB", line)
    seeds = record["benchmark_seeds"]
    if not seeds or len(seeds) > MAX_SEEDS or len(set(map(repr, seeds))) != len(seeds) \
            or not all(type(seed) is int and 0 <= seed < 2**63 for seed in seeds):
        _fail(f"{label}: field 'benchmark_seeds' must be a non-empty list of at most "
              f"{MAX_SEEDS} distinct integers", line)
    hints = record["hints"]
    if hints and (set(hints) not in [set(keys) for keys in HINT_KEYS]
                  or not all(isinstance(text, str) and text.strip() and "\x00" not in text
                             and len(text) <= HINT_CHARS for text in hints.values())):
        _fail(f"{label}: field 'hints' must be {{}}, {{\"hint\"}} or {{\"hint_1\", \"hint_2\"}}, "
              f"each a text of at most {HINT_CHARS:,} characters", line)
    if record["max_turns"] > 200:
        _fail(f"{label}: field 'max_turns' is at most 200", line)


def panel_record_build(record: dict[str, Any], *,
                       pk: Callable[[str, str | None], int | None]) -> models.Model:
    """The unsaved row of a panel, panel entry or outside outcome record."""
    kind, uuid = record["kind"], UUID(record["uuid"])
    plain = {spec.name: record[spec.name] for spec in PANEL_SCHEMA[kind]
             if spec.type not in ("ref", "time")}
    refs = {f"{spec.name}_id": pk(spec.ref, record[spec.name]) for spec in PANEL_SCHEMA[kind]
            if spec.type == "ref"}
    return PANEL_MODELS[kind](uuid=uuid, **plain, **refs)


@dataclass(frozen=True)
class _Entry:
    """What a new panel entry must agree with once the whole file is read."""

    line: int
    label: str
    panel: str
    environment: str
    played_sha256: str
    contract: str
    class_name: str
    hints: dict[str, str | None]  # "hint_1"/"hint_2" -> the hint record's uuid or None
    hint_sha256: dict[int, str]  # level -> SHA-256 of the entry's hint text


class PanelChecks:
    """What is checked once the whole file is read: each new panel's manifest hash, that every
    new entry's environment and hint rows hold exactly what the entry plays (the hash pins the
    played bytes), and that outside outcomes never name a player evaluated on their panel."""

    def __init__(self) -> None:
        self.panels: dict[str, tuple[int, str]] = {}
        self.entries: dict[str, list[tuple[int, ManifestRow]]] = defaultdict(list)
        self.new_entries: dict[str, _Entry] = {}
        # uuid -> (SHA-256 of source, contract, class_name) / (environment, level, SHA-256)
        self.environments: dict[str, tuple[str, str, str]] = {}
        self.hints: dict[str, tuple[str, int, str]] = {}
        self.outcomes: dict[str, dict[str, int]] = defaultdict(dict)

    def remember(self, record: dict[str, Any], line: int) -> None:
        kind = record["kind"]
        if kind == "panel":
            self.panels[record["uuid"]] = (line, record["manifest_sha256"])
        elif kind == "environment":
            self.environments[record["uuid"]] = (
                _sha(record["source"]), record["contract"], record["class_name"])
        elif kind == "hint":
            self.hints[record["uuid"]] = (record["environment"], record["level"],
                                          _sha(record["text"]))
        elif kind == "outside_outcome":
            self.outcomes[record["panel"]].setdefault(record["model"], line)
        elif kind == "panel_entry":
            self.entries[record["panel"]].append((record["position"], ManifestRow(
                id=record["entry_id"], author=record["author"] or None,
                domain=record["domain"], split=record["split"],
                source_sha256=record["source_sha256"], class_name=record["class_name"],
                max_turns=record["max_turns"], benchmark_seeds=tuple(record["benchmark_seeds"]),
                hints=dict(record["hints"]))))
            played, contract = entry_played(record)
            self.new_entries[record["uuid"]] = _Entry(
                line=line, label=f"panel entry {record['entry_id']}", panel=record["panel"],
                environment=record["environment"], played_sha256=_sha(played),
                contract=contract, class_name=record["class_name"],
                hints={"hint_1": record["hint_1"], "hint_2": record["hint_2"]},
                hint_sha256={level: _sha(text)
                             for level, text in hint_levels(record["hints"]).items()})

    def finish(self, existing: dict[str, set[str]]) -> None:
        for uuid, (line, stated) in self.panels.items():
            if uuid in existing["panel"]:
                continue
            rows = [row for _, row in sorted(self.entries.get(uuid, []), key=lambda x: x[0])]
            if manifest_sha256(rows) != stated:
                _fail(f"panel {uuid}: its entries in this file do not give its manifest hash "
                      f"{stated[:12]}… (a panel never changes: export it again)", line)
        entries = {uuid: entry for uuid, entry in self.new_entries.items()
                   if uuid not in existing["panel_entry"]}
        self._stored_rows(entries.values())
        for entry in sorted(entries.values(), key=lambda item: item.line):
            self._entry_check(entry, existing)
        self._outcomes_check()

    def _stored_rows(self, entries: Iterable[_Entry]) -> None:
        """Load the environments and hints the new entries refer to that are stored here."""
        entries = list(entries)
        wanted = {entry.environment for entry in entries} - set(self.environments)
        for start in range(0, len(wanted), 500):
            chunk = sorted(wanted)[start:start + 500]
            for uuid, source, contract, class_name in Environment.objects.filter(
                    uuid__in=chunk).values_list("uuid", "source", "contract", "class_name"):
                self.environments[str(uuid)] = (_sha(source), contract, class_name)
        hints = {uuid for entry in entries for uuid in entry.hints.values() if uuid}
        for uuid, environment, level, text in Hint.objects.filter(
                uuid__in=sorted(hints - set(self.hints))).values_list(
                "uuid", "environment__uuid", "level", "text"):
            self.hints[str(uuid)] = (str(environment), level, _sha(text))

    def _entry_check(self, entry: _Entry, existing: dict[str, set[str]]) -> None:
        if entry.panel in existing["panel"] or entry.panel not in self.panels:
            _fail(f"{entry.label}: panel {entry.panel} is stored here already and a panel never "
                  "gains or changes versions", entry.line)
        stored = self.environments.get(entry.environment)
        if stored is None or stored[0] != entry.played_sha256 or stored[1] != entry.contract \
                or (entry.contract == Contract.ENVDUELS_V1 and stored[2] != entry.class_name):
            _fail(f"{entry.label}: environment {entry.environment} does not hold the source "
                  "the entry's class file plays; the panel's hash would not pin what is played "
                  "(nothing was imported)", entry.line)
        for level in (1, 2):
            reference = entry.hints[f"hint_{level}"]
            expected = entry.hint_sha256.get(level)
            hint = self.hints.get(reference) if reference else None
            if expected is None and reference is None:
                continue
            if expected is None or hint is None or hint != (entry.environment, level, expected):
                _fail(f"{entry.label}: hint_{level} is not the entry's level-{level} hint on its "
                      "environment; the panel's hash would not pin what is played (nothing was "
                      "imported)", entry.line)

    def _outcomes_check(self) -> None:
        if not self.outcomes:
            return
        evaluated = defaultdict(set)
        for panel, name in Evaluation.objects.filter(
                panel__uuid__in=list(self.outcomes)).values_list("panel__uuid", "player__name"):
            evaluated[str(panel)].add(name)
        for panel, models_lines in self.outcomes.items():
            for model, line in models_lines.items():
                if model in evaluated.get(panel, ()):
                    _fail(f"outside outcome of {model!r}: {model} was evaluated here on panel "
                          f"{panel}; outside outcomes under the same name would mix with its "
                          "own plays (rename the model in the file)", line)


record_kinds_register(RecordKinds(
    schema=PANEL_SCHEMA, models=PANEL_MODELS, check=panel_record_check, build=panel_record_build,
    file_checks=PanelChecks))
