"""The original's files from the browser: an envduels-v1 export (zip or tar) and optionally its
result snapshot, staged, previewed, then imported on a confirming POST.

The preview runs the command line's own steps (`panel_import`'s reader, hashes and sandbox
validation, each class validated before anything is written, then its writes and
`snapshot_import`) inside a transaction that is always rolled back, so what it shows is what
the import would write, and nothing is written; SQLite's write lock is held only for the short
writes, never while classes are validated. The confirming POST then runs `panel_import` and
`snapshot_import` themselves, one after the other as `manage.py import DIR` and `manage.py
import DIR --panel P` do, on the same staged bytes.
A staged upload belongs to the user who sent it and is removed once imported, refused or
older than STAGE_SECONDS.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.db import transaction

from duels.engine.validation import environment_invalid_reason
from duels.models import Panel, PanelOrigin
from duels.panels.archives import archive_unpacked, folder_with
from duels.panels.errors import PanelError
from duels.panels.imports import (
    entry_validation,
    panel_entry_write,
    panel_import,
    panel_import_preview,
)
from duels.panels.selectors import panel_entries, panel_outcome_summary
from duels.panels.snapshot import SnapshotReport, snapshot_import
from duels.panels.v1_read import ExportEntry
from sandbox_runner import SandboxUnavailable

STAGE_SECONDS = 3600
TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")
NAME_CHARS = re.compile(r"[^A-Za-z0-9._ -]+")


@dataclass
class ImportPreview:
    """What importing the staged files writes (or why they are refused: `refused`)."""

    token: str
    name: str
    refused: str = ""  # the export's refusal; nothing can be imported
    snapshot_refused: str = ""  # the snapshot's refusal; nothing can be imported either
    manifest_sha256: str = ""
    existing: Panel | None = None  # the export is here already (re-importing adds nothing)
    versions: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    snapshot: SnapshotReport | None = None
    has_snapshot: bool = False

    @property
    def importable(self) -> bool:
        return not self.refused and not self.snapshot_refused

    @property
    def authors(self) -> list[str]:
        return sorted({row["author"] for row in self.versions if row["author"]})

    @property
    def domains(self) -> list[str]:
        return sorted({row["domain"] for row in self.versions})

    @property
    def invalid(self) -> int:
        return sum(1 for row in self.versions if row["invalid_reason"])

    @property
    def seeds(self) -> int:
        return sum(len(row["seeds"]) for row in self.versions)


class _DryRun(Exception):
    """Raised to roll the preview's transaction back."""


def _stage_root() -> Path:
    return Path(settings.VAR_DIR) / "panel-imports"


def _stage_sweep() -> None:
    root = _stage_root()
    if not root.is_dir():
        return
    limit = time.time() - STAGE_SECONDS
    for folder in root.iterdir():
        if folder.is_dir() and not folder.is_symlink() and folder.stat().st_mtime < limit:
            shutil.rmtree(folder, ignore_errors=True)


def panel_upload_name(filename: str) -> str:
    """A panel name from an uploaded archive's file name (`run.tar.gz` → `run`)."""
    stem = Path(filename or "").name
    for suffix in (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return NAME_CHARS.sub("-", stem).strip(" -")[:200] or "imported export"


def import_stage(*, archive: BinaryIO, snapshot: BinaryIO | None, name: str, user: Any) -> str:
    """Keep the uploads for the preview and the confirming POST; return their token."""
    _stage_sweep()
    token = secrets.token_urlsafe(16)
    folder = _stage_root() / token
    folder.mkdir(parents=True, mode=0o700)
    for label, stream in (("archive", archive), ("snapshot", snapshot)):
        if stream is None:
            continue
        stream.seek(0)
        with open(folder / label, "xb") as out:
            shutil.copyfileobj(stream, out)
    (folder / "meta.json").write_text(json.dumps({"user": user.pk, "name": name[:200]}))
    return token


def _staged(token: str, user: Any) -> tuple[Path, dict]:
    folder = _stage_root() / token if TOKEN.match(token or "") else None
    meta_path = folder / "meta.json" if folder else None
    if meta_path is None or not meta_path.is_file():
        raise PanelError("this upload is no longer here (imported already, refused, or older "
                         "than an hour): upload the files again")
    meta = json.loads(meta_path.read_text())
    if meta.get("user") != user.pk:
        raise PanelError("this upload was sent by another user: upload the files yourself")
    return folder, meta


def import_discard(*, token: str) -> None:
    if TOKEN.match(token or ""):
        shutil.rmtree(_stage_root() / token, ignore_errors=True)


def _export_checked(root: Path) -> tuple[list[ExportEntry], str, Panel | None, list | None]:
    """`panel_import`'s checks (`panel_import_preview`: the reader, the hashes) and its sandbox
    validation, run before any write (so SQLite's write lock is never held while classes are
    validated): the entries, the manifest hash, the panel already here with that hash, and
    each class's validation report."""
    checked = panel_import_preview(root=root)
    if checked.existing is not None:
        return checked.entries, checked.manifest_sha256, checked.existing, None
    try:
        reports = [entry_validation(entry) for entry in checked.entries]
    except SandboxUnavailable as error:
        raise PanelError(f"no sandbox can validate the classes here ({error}); see "
                         "docs/sandbox.md (nothing was imported)") from None
    return checked.entries, checked.manifest_sha256, None, reports


def _export_written(entries: list[ExportEntry], digest: str, reports: list, name: str,
                    user: Any) -> Panel:
    """`panel_import`'s writes (inside the preview's transaction, which is rolled back)."""
    panel = Panel.objects.create(name=name[:200], manifest_sha256=digest,
                                 origin=PanelOrigin.IMPORT, created_by=user)
    for position, (entry, report) in enumerate(zip(entries, reports, strict=True)):
        panel_entry_write(panel=panel, position=position, entry=entry, report=report)
    return panel


def _versions_and_snapshot(folder: Path, stack: ExitStack, panel: Panel,
                           preview: ImportPreview) -> None:
    """The panel's versions into `preview`, then the snapshot's import on it (if any)."""
    preview.versions = [{
        "id": entry.entry_id, "author": entry.author, "domain": entry.domain,
        "seeds": list(entry.benchmark_seeds), "hint_levels": entry.hint_levels,
        "invalid_reason": "" if entry.environment.is_valid
        else environment_invalid_reason(environment=entry.environment)}
        for entry in panel_entries(panel)]
    if not preview.has_snapshot:
        return
    try:
        with open(folder / "snapshot", "rb") as stream:
            snapshot_unpacked = stack.enter_context(archive_unpacked(
                stream=stream, what="the snapshot archive"))
        snapshot_root = folder_with(snapshot_unpacked, "run.json", what="the snapshot archive")
        preview.snapshot = snapshot_import(root=snapshot_root, panel=panel)
    except PanelError as error:
        preview.snapshot_refused = str(error)
        raise
    preview.outcomes = panel_outcome_summary(panel)


def _export_unpacked(folder: Path, stack: ExitStack, preview: ImportPreview) -> Path:
    try:
        with open(folder / "archive", "rb") as stream:
            unpacked = stack.enter_context(archive_unpacked(stream=stream,
                                                            what="the export archive"))
        return folder_with(unpacked, "manifest.json", what="the export archive")
    except PanelError as error:
        preview.refused = str(error)
        raise


def _run(folder: Path, meta: dict, preview: ImportPreview, user: Any) -> None:
    """Both imports for real, as the command line runs them, filling `preview`."""
    with ExitStack() as stack:
        export_root = _export_unpacked(folder, stack, preview)
        try:
            panel, created = panel_import(root=export_root, name=meta["name"], user=user)
        except PanelError as error:
            preview.refused = str(error)
            raise
        preview.manifest_sha256 = panel.manifest_sha256
        preview.existing = None if created else panel
        _versions_and_snapshot(folder, stack, panel, preview)


def import_preview(*, token: str, user: Any) -> ImportPreview:
    """What importing the staged upload would write, with nothing written. A refused upload
    is discarded (upload it again once fixed)."""
    folder, meta = _staged(token, user)
    preview = ImportPreview(token=token, name=meta["name"],
                            has_snapshot=(folder / "snapshot").is_file())
    try:
        with ExitStack() as stack:
            export_root = _export_unpacked(folder, stack, preview)
            try:
                entries, digest, existing, reports = _export_checked(export_root)
            except PanelError as error:
                preview.refused = str(error)
                raise
            preview.manifest_sha256, preview.existing = digest, existing
            with transaction.atomic():  # short: every class is validated already
                panel = existing or _export_written(entries, digest, reports, meta["name"],
                                                    user)
                _versions_and_snapshot(folder, stack, panel, preview)
                raise _DryRun
    except _DryRun:
        pass
    except PanelError:
        import_discard(token=token)
    return preview


def import_confirm(*, token: str, user: Any) -> tuple[Panel, ImportPreview]:
    """Import the staged upload for real (the same checks as the preview, run again); the
    upload is removed whatever happens. PanelError when it is refused, nothing written."""
    folder, meta = _staged(token, user)
    preview = ImportPreview(token=token, name=meta["name"],
                            has_snapshot=(folder / "snapshot").is_file())
    try:
        # No transaction around both, as on the command line: each import writes all or
        # nothing in its own short transaction, after its sandbox validation (so SQLite's write
        # lock is not held while the classes are validated); the preview has just checked both.
        _run(folder, meta, preview, user)
    except PanelError as error:
        if preview.snapshot_refused:
            raise PanelError(f"The export is imported as a panel (manifest "
                             f"{preview.manifest_sha256[:12]}…), but its snapshot was refused: "
                             f"{error} — no outcome was imported.") from None
        raise PanelError(f"{error} — nothing was imported.") from None
    finally:
        import_discard(token=token)
    panel = Panel.objects.get(manifest_sha256=preview.manifest_sha256)
    return panel, preview
