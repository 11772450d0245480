"""Import of an envduels-v1 export as a new panel: read and check every file, validate every
class in the sandbox, then write it all in one transaction.

A bad file anywhere refuses the whole export (v1_read names the entry) and nothing is written.
A class that loads but fails a check (it reads the clock, its episodes differ between two
sandboxes, it raises) is imported all the same, as an invalid environment with the reason in its
report: it is shown, never played. Re-importing an export already here is a no-op (the same
manifest hash names the same panel).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from duels.engine.validation import source_validate
from duels.models import (
    Contract,
    Environment,
    EnvironmentStatus,
    Hint,
    Panel,
    PanelEntry,
    PanelOrigin,
    Player,
    Provider,
)
from duels.panels.errors import PanelError
from duels.panels.manifest import ManifestRow, hint_levels, manifest_sha256
from duels.panels.v1_read import ExportEntry, export_claimed_hash, export_read
from duels.signals import data_changed
from sandbox_runner import SandboxUnavailable

AUTHOR_NOTE = "Author of environments imported from an envduels-v1 export"


@dataclass(frozen=True)
class PanelImportPreview:
    """What `panel_import` would write for an export, every file checked, nothing written
    (classes are validated in the sandbox only by the import itself)."""

    entries: list[ExportEntry]
    manifest_sha256: str
    existing: Panel | None  # the panel this export already is here, if any


def panel_import_preview(*, root: Path) -> PanelImportPreview:
    """Read and check the export at `root` without writing; raises PanelError naming the
    entry, as `panel_import` would."""
    entries = export_read(root)
    digest = manifest_sha256(entry.row for entry in entries)
    claimed = export_claimed_hash(root)
    if claimed is not None and claimed != digest:
        raise PanelError(f"manifest.json claims the panel hash {claimed[:64]}, but its versions, "
                         f"seeds and hints give {digest}: the export was changed after it was "
                         "written (export the panel again)")
    return PanelImportPreview(entries=entries, manifest_sha256=digest,
                              existing=Panel.objects.filter(manifest_sha256=digest).first())


def panel_import(*, root: Path, name: str = "", user: Any = None) -> tuple[Panel, bool]:
    """Import the export at `root` as a panel; return (panel, created). Raises PanelError."""
    preview = panel_import_preview(root=root)
    entries, digest = preview.entries, preview.manifest_sha256
    if preview.existing is not None:
        return preview.existing, False
    try:
        reports = [entry_validation(entry) for entry in entries]
    except SandboxUnavailable as error:
        raise PanelError(f"no sandbox can validate the classes here ({error}); see "
                         "docs/sandbox.md (nothing was imported)") from None
    with transaction.atomic():
        panel = Panel.objects.create(name=(name or root.resolve().name)[:200],
                                     manifest_sha256=digest, origin=PanelOrigin.IMPORT,
                                     created_by=user)
        for position, (entry, report) in enumerate(zip(entries, reports, strict=True)):
            panel_entry_write(panel=panel, position=position, entry=entry, report=report)
    data_changed.send(sender=Panel)
    return panel, True


def played_source(entry: ExportEntry) -> tuple[str, str]:
    """(source, contract) of what is played: the design an EnvDuels class carries, else the
    class itself through the guest's envduels-v1 adapter."""
    if entry.design_source is not None:
        return entry.design_source, Contract.ENVDUELS
    return entry.class_source, Contract.ENVDUELS_V1


def entry_validation(entry: ExportEntry) -> dict[str, Any]:
    source, contract = played_source(entry)
    adapter = None if contract == Contract.ENVDUELS else {
        "format": "envduels-v1", "class_name": entry.row.class_name,
        "max_turns": entry.row.max_turns}
    return source_validate(source=source, hint_texts=list(entry.row.hints.values()),
                           name=f"version {entry.row.id}", adapter=adapter)


def author_player(name: str | None) -> Player | None:
    """The player an author name stands for: this installation's own, or a new imported one
    (never called until staff configure it)."""
    if not name:
        return None
    player, _ = Player.objects.get_or_create(name=name, defaults={
        "provider": Provider.OPENAI_COMPATIBLE, "model": name, "imported": True,
        "description": AUTHOR_NOTE})
    return player


def panel_entry_write(*, panel: Panel, position: int, entry: ExportEntry,
                      report: dict[str, Any]) -> PanelEntry:
    row: ManifestRow = entry.row
    source, contract = played_source(entry)
    author = author_player(row.author)
    environment = Environment(
        title=entry.title, author=author, source=source, contract=contract,
        class_name=row.class_name if contract == Contract.ENVDUELS_V1 else "",
        domain=row.domain, benchmark_seeds=list(row.benchmark_seeds), validation=report,
        status=EnvironmentStatus.VALID if report["valid"] else EnvironmentStatus.INVALID,
        max_steps=report.get("max_steps") or (row.max_turns if contract == Contract.ENVDUELS_V1
                                               else entry.design_max_steps))
    environment.save()
    hints = {level: Hint.objects.create(environment=environment, author=author, text=text,
                                        level=level)
             for level, text in hint_levels(row.hints).items()}
    return PanelEntry.objects.create(
        panel=panel, position=position, entry_id=row.id, environment=environment,
        author=row.author or "", domain=row.domain, split=row.split,
        class_source=entry.class_source, source_sha256=row.source_sha256,
        class_name=row.class_name, max_turns=row.max_turns,
        benchmark_seeds=list(row.benchmark_seeds), hints=dict(row.hints),
        hint_1=hints.get(1), hint_2=hints.get(2))
