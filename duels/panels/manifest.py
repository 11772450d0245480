"""A panel's canonical manifest: the bytes whose SHA-256 identifies the panel everywhere.

The manifest is the JSON object

    {"format": "envduels-panel-1",
     "environments": [{"id", "author", "domain", "split", "source_sha256", "class_name",
                       "max_turns", "benchmark_seeds", "hints"}, ...]}

with the environments in the panel's order, `author` a model name or null, `split` "" when
none, `benchmark_seeds` a list of integers in the panel's order, and `hints` the mapping the
version's privileged.json carries (`{"hint": text}` or `{"hint_1": text, "hint_2": text}`,
`{}` without a hint). It is written with sorted keys, no spaces (separators "," and ":"),
non-ASCII characters as themselves, encoded as UTF-8, with no trailing newline. Only what
decides what a solver plays and how it is credited is in it: the name of the panel, the
titles and the installation's uuids are not, so the same versions, seeds and hints give the
same hash on every installation (docs/panels.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

MANIFEST_FORMAT = "envduels-panel-1"
HINT_KEYS = (("hint",), ("hint_1", "hint_2"))


@dataclass(frozen=True)
class ManifestRow:
    """One version as the manifest has it (and as an envduels-v1 export writes it)."""

    id: str
    author: str | None
    domain: str
    split: str
    source_sha256: str
    class_name: str
    max_turns: int
    benchmark_seeds: tuple[int, ...]
    hints: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"id": self.id, "author": self.author, "domain": self.domain,
                "split": self.split, "source_sha256": self.source_sha256,
                "class_name": self.class_name, "max_turns": self.max_turns,
                "benchmark_seeds": list(self.benchmark_seeds), "hints": dict(self.hints)}


def manifest_bytes(rows: Iterable[ManifestRow]) -> bytes:
    """The canonical manifest of `rows` (in the panel's order), as documented above."""
    document = {"format": MANIFEST_FORMAT, "environments": [row.as_json() for row in rows]}
    return json.dumps(document, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def manifest_sha256(rows: Iterable[ManifestRow]) -> str:
    return hashlib.sha256(manifest_bytes(rows)).hexdigest()


def hint_levels(hints: dict[str, str]) -> dict[int, str]:
    """{level: text}: `hint` and `hint_1` are level 1, `hint_2` level 2."""
    if set(hints) == {"hint"}:
        return {1: hints["hint"]}
    return {int(key[-1]): hints[key] for key in ("hint_1", "hint_2") if key in hints}


def hints_mapping(levels: dict[int, str]) -> dict[str, str]:
    """The privileged.json mapping for hint texts by level (the inverse of hint_levels)."""
    if not levels:
        return {}
    if set(levels) == {1}:
        return {"hint": levels[1]}
    return {f"hint_{level}": levels[level] for level in sorted(levels)}
