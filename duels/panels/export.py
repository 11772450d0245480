"""A panel leaves EnvDuels as an envduels-v1 export that imports back to the same panel.

Each entry's class file is written as it was frozen, byte for byte (so its `source_sha256`
holds), with its hints (`privileged.json`, the levels as the original reads them) and its
benchmark seeds (`metadata.json`), under the entry's own id. The manifest's `panel` object
names the panel and its manifest hash; importing the folder elsewhere gives the same hash.
"""

from __future__ import annotations

import json
from pathlib import Path

from duels.exchange.identifiers import IdentifierError, entry_id_check, path_under
from duels.models import Panel
from duels.panels.selectors import panel_entries
from duels.trainers.common import (
    PackageError,
    directory_write,
    installation_reference,
    markdown_text,
    sandbox_runner_vendor,
)
from duels.trainers.envduels_v1 import FORMAT_VERSION


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")


def panel_export_write(*, panel: Panel, out: Path) -> Path:
    """Write `panel` as an envduels-v1 export at `out` (a new directory); return `out`."""
    entries = list(panel_entries(panel))
    if not entries:
        raise PackageError(f"panel {panel.name} has no environments")

    def fill(root: Path) -> None:
        rows = []
        for entry in entries:
            try:
                folder = path_under(root, entry_id_check(entry.entry_id))
            except IdentifierError as error:
                # A row stored before ids were checked at import: refused, never followed.
                raise PackageError(f"panel {panel.name}, entry {entry.entry_id[:120]!r}: "
                                   f"{error}; nothing was written") from None
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "environment.py").write_bytes(entry.class_source.encode("utf-8"))
            row = {"id": entry.entry_id, "author": entry.author or None,
                   "domain": entry.domain, "source": f"{entry.entry_id}/environment.py",
                   "source_sha256": entry.source_sha256, "class_name": entry.class_name,
                   "max_turns": entry.max_turns, "metadata": f"{entry.entry_id}/metadata.json",
                   "benchmark_seeds": list(entry.benchmark_seeds),
                   "title": entry.environment.title,
                   "content_hash": entry.environment.content_hash}
            if entry.split:
                row["split"] = entry.split
            if entry.hints:
                row["privileged"] = f"{entry.entry_id}/privileged.json"
                _write_json(folder / "privileged.json",
                            {"environment_id": entry.entry_id, "hints": entry.hints})
            _write_json(folder / "metadata.json", {
                "environment_id": entry.entry_id,
                "benchmark_seeds": list(entry.benchmark_seeds),
                "title": entry.environment.title, "author": entry.author or None})
            rows.append(row)
        _write_json(root / "manifest.json", {
            "format_version": FORMAT_VERSION, "generator": "EnvDuels",
            "panel": {"uuid": str(panel.uuid), "name": panel.name,
                      "manifest_sha256": panel.manifest_sha256},
            "environments": rows})
        sandbox_runner_vendor(into=root / "_envduels")
        (root / "README.md").write_text(_readme(panel, rows), encoding="utf-8")

    return directory_write(out=out, fill=fill)


def _readme(panel: Panel, rows: list[dict]) -> str:
    lines = [
        f"# EnvDuels panel {markdown_text(panel.name)} (envduels-v1 export)", "",
        f"Manifest hash `{panel.manifest_sha256}` (SHA-256 of the panel's canonical manifest: "
        "the same versions, benchmark seeds and hints give the same hash on every EnvDuels "
        "installation; `manage.py import` of this folder makes the same panel).", "",
        "Classes EnvDuels generated run their design inside EnvDuels' sandbox runner (the "
        "installed one, else the copy in `_envduels/`); imported classes are written as they "
        "came, byte for byte. Hints are in each version's `privileged.json`: never show them "
        "to a solver that should play unhinted.", "",
        f"Written by the EnvDuels installation at {installation_reference()}.", "",
        "| id | author | domain | max turns | benchmark seeds |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(f"| `{markdown_text(row['id'])}` | {markdown_text(row['author'] or '—')} | "
                     f"{markdown_text(row['domain'])} | {row['max_turns']} | "
                     f"{len(row['benchmark_seeds'])} |")
    return "\n".join([*lines, ""])
