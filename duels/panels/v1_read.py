"""Reading an envduels-v1 export (the original harness's format version 1) without running it.

    manifest.json   {"format_version": 1, "environments": [{"id", "author", "domain", "source",
                     "source_sha256", "class_name", "max_turns", "metadata", "privileged",
                     "split"}, ...]}

`source` is the class file's path inside the export (its SHA-256 must be `source_sha256`);
`metadata` and `privileged` are paths of JSON files (or the objects themselves):
`metadata.benchmark_seeds` a non-empty list of integers, `privileged.hints` either
`{"hint": text}` or `{"hint_1": text, "hint_2": text}` with `privileged.environment_id` the row's
id. Everything is checked before anything is written; the first problem refuses the whole
export with the entry named (PanelError). Nothing here runs the code: a class file EnvDuels
generated (its runtime, then a subclass carrying the design's source) is recognised from its
syntax tree and read back to the design it carries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duels.bounds import HINT_CHARS
from duels.exchange.identifiers import IdentifierError, entry_id_check
from duels.exchange.untrusted import (
    CLASS_FILE,
    MANIFEST,
    SOURCE,
    ImportBudget,
    UntrustedFileError,
    json_of,
    untrusted_json,
    untrusted_read,
    untrusted_read_path,
)
from duels.panels.errors import PanelError
from duels.panels.manifest import HINT_KEYS, ManifestRow
from duels.trainers.envduels_v1 import generated_design

FORMAT_VERSION = 1
MAX_ENVIRONMENTS = 2000
MAX_SEEDS = 1000
SEED_RANGE = 2**63
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}\Z")


@dataclass(frozen=True)
class ExportEntry:
    """One checked row of an export: its manifest row, class file text and what to play."""

    row: ManifestRow
    class_source: str
    # EnvDuels' own contract when the class file is one EnvDuels generated (the design it
    # carries), else None: the class itself is played through the guest's adapter.
    design_source: str | None
    design_max_steps: int | None
    title: str


def text_of(data: bytes, what: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PanelError(f"{what} is not UTF-8 text") from None
    if "\x00" in text:
        raise PanelError(f"{what} contains a NUL character")
    return text


def export_read(root: Path) -> list[ExportEntry]:
    """Every entry of the export at `root`, checked; raises PanelError naming the entry."""
    root = root.resolve()
    budget = ImportBudget()
    try:
        manifest = json_of(untrusted_read_path(root / "manifest.json", what="manifest.json",
                                               kind=MANIFEST, budget=budget), "manifest.json")
    except UntrustedFileError as error:
        if not os.path.lexists(root / "manifest.json"):
            raise PanelError(f"{root} has no manifest.json: not an envduels-v1 export") from None
        raise PanelError(str(error)) from None
    if not isinstance(manifest, dict):
        raise PanelError("manifest.json is not a JSON object")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION or type(version) is not int:
        raise PanelError(f"manifest.json: unknown format_version {json.dumps(version)[:40]} "
                         f"(this EnvDuels reads format_version {FORMAT_VERSION})")
    rows = manifest.get("environments")
    if not isinstance(rows, list) or not rows:
        raise PanelError("manifest.json lists no environments")
    if len(rows) > MAX_ENVIRONMENTS:
        raise PanelError(f"manifest.json lists {len(rows)} environments; at most "
                         f"{MAX_ENVIRONMENTS} are read")
    entries, seen = [], set()
    for number, row in enumerate(rows, start=1):
        label = (f"entry {row['id'][:200]!r}" if isinstance(row, dict) and isinstance(
            row.get("id"), str) else f"entry {number}")
        try:
            entry = entry_read(root, row, budget)
        except (PanelError, UntrustedFileError, IdentifierError) as error:
            raise PanelError(f"{label}: {error}") from None
        if entry.row.id in seen:
            raise PanelError(f"{label}: the id appears twice in manifest.json")
        seen.add(entry.row.id)
        entries.append(entry)
    return entries


def export_claimed_hash(root: Path) -> str | None:
    """The manifest hash an export EnvDuels wrote claims for its panel (`panel.manifest_sha256`
    in manifest.json), else None (the original harness claims none)."""
    try:
        manifest = json_of(untrusted_read_path(root.resolve() / "manifest.json",
                                               what="manifest.json", kind=MANIFEST),
                           "manifest.json")
    except UntrustedFileError as error:
        raise PanelError(str(error)) from None
    panel = manifest.get("panel") if isinstance(manifest, dict) else None
    claim = panel.get("manifest_sha256") if isinstance(panel, dict) else None
    return claim if isinstance(claim, str) else None


def entry_read(root: Path, row: Any, budget: ImportBudget) -> ExportEntry:
    if not isinstance(row, dict):
        raise PanelError("is not a JSON object")
    env_id = entry_id_check(row.get("id"))
    data = untrusted_read(root, row.get("source"), what="source", kind=CLASS_FILE,
                          budget=budget)
    digest = hashlib.sha256(data).hexdigest()
    if row.get("source_sha256") != digest:
        raise PanelError(f"source_sha256 {str(row.get('source_sha256'))[:64]} does not match "
                         f"the file's SHA-256 {digest}")
    class_source = text_of(data, "source")
    class_name, max_turns = row.get("class_name"), row.get("max_turns")
    if not isinstance(class_name, str) or not IDENTIFIER.match(class_name):
        raise PanelError("class_name must be a Python class name")
    if type(max_turns) is not int or not 1 <= max_turns <= 200:
        raise PanelError(f"max_turns must be an integer from 1 to 200, got {max_turns!r:.40}")
    author, domain, split = row.get("author"), row.get("domain"), row.get("split", "")
    if author is not None and (not isinstance(author, str) or not 0 < len(author) <= 100):
        raise PanelError("author must be a model name (at most 100 characters) or null")
    if not isinstance(domain, str) or not 0 < len(domain) <= 60:
        raise PanelError("domain must be a name of at most 60 characters")
    if not isinstance(split, str) or len(split) > 40:
        raise PanelError("split must be text of at most 40 characters")
    metadata = document(root, row.get("metadata"), "metadata", budget)
    seeds = seeds_read(metadata.get("benchmark_seeds"))
    hints = hints_read(root, row.get("privileged"), env_id, budget)
    design_source, design_max_steps = generated_design(class_source, class_name)
    played = class_source if design_source is None else design_source
    if len(played.encode("utf-8")) > SOURCE.limit:
        raise PanelError(f"the {'class file' if design_source is None else 'design it carries'}"
                         f" is {len(played.encode('utf-8')):,} bytes; an environment's source is "
                         f"at most {SOURCE.limit // 1024} KiB")
    title = metadata.get("title") if isinstance(metadata.get("title"), str) else ""
    return ExportEntry(
        row=ManifestRow(id=env_id, author=author, domain=domain, split=split,
                        source_sha256=digest, class_name=class_name, max_turns=max_turns,
                        benchmark_seeds=seeds, hints=hints),
        class_source=class_source, design_source=design_source,
        design_max_steps=design_max_steps, title=(title or env_id)[:200])


def document(root: Path, value: Any, what: str, budget: ImportBudget) -> dict:
    """A row's `metadata` or `privileged`: the JSON file it names, or the object itself."""
    if isinstance(value, dict):
        return value
    loaded = untrusted_json(root, value, what=f"{what} {str(value)[:200]}", budget=budget)
    if not isinstance(loaded, dict):
        raise PanelError(f"{what} is not a JSON object")
    return loaded


def seeds_read(seeds: Any) -> tuple[int, ...]:
    if not isinstance(seeds, list) or not seeds:
        raise PanelError("metadata has no benchmark_seeds (a non-empty list of integers)")
    if len(seeds) > MAX_SEEDS:
        raise PanelError(f"metadata lists {len(seeds)} benchmark seeds; at most {MAX_SEEDS}")
    for seed in seeds:
        if type(seed) is not int:
            raise PanelError(f"benchmark seed {json.dumps(seed)[:40]} is not an integer")
        if not 0 <= seed < SEED_RANGE:
            raise PanelError(f"benchmark seed {seed} is outside 0..2**63-1")
    if len(set(seeds)) != len(seeds):
        raise PanelError("metadata lists a benchmark seed twice")
    return tuple(seeds)


def hints_read(root: Path, value: Any, env_id: str, budget: ImportBudget) -> dict[str, str]:
    """The hints as privileged.json has them: one `hint`, or `hint_1` and `hint_2`."""
    if value is None:
        return {}
    privileged = document(root, value, "privileged", budget)
    if privileged.get("environment_id") != env_id:
        raise PanelError("privileged.environment_id is not the row's id")
    hints = privileged.get("hints")
    if not isinstance(hints, dict) or set(hints) not in [set(keys) for keys in HINT_KEYS]:
        raise PanelError("privileged.hints must be {\"hint\"} or {\"hint_1\", \"hint_2\"}")
    for key, text in hints.items():
        if not isinstance(text, str) or not text.strip():
            raise PanelError(f"privileged hint {key} is empty")
        if len(text) > HINT_CHARS or "\x00" in text:
            raise PanelError(f"privileged hint {key} is over {HINT_CHARS} characters or "
                             "contains a NUL character")
    return {key: hints[key] for key in sorted(hints)}
