"""What the hostile-input suite builds: a genuine panel stored without a sandbox, its exchange
file as records, the state of the database and of a folder to compare after a refusal, and the
generated hostile values (traversal, look-alikes) every id and path field is tried with."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command

from duels.models import Environment, Hint, Panel, PanelEntry, Player
from duels.panels.imports import panel_entry_write
from duels.panels.manifest import ManifestRow, manifest_sha256
from duels.panels.v1_read import export_read
from tests.duels.panels.handmade import write_export

# Generated hostile paths: every way out of a folder, plus ids that only look right.
TRAVERSALS = (
    "../outside", "../../../../tmp/outside", "/tmp/outside", "a/../../outside",
    "environments/alpha-7b/env_001/../../../../outside", "..", "./../outside",
    "a\\..\\..\\outside", "a/\x00/b", "",
)
LOOK_ALIKES = (
    "environments/alpha-7b/env_001/harden_01".replace("e", "\u0435", 1),  # Cyrillic e
    "environments/alpha\u20117b/env_001/harden_01",  # non-breaking hyphen
    "environments/alpha-7b/env_\uff10\uff10\uff11/harden_01",  # full-width digits
    "environments/alpha-7b/env_001/harden_01\n",
    "environments/alpha-7b/env_001/harden_01/",
)


def database_state() -> dict[str, int]:
    """Row counts of every EnvDuels model and of the user accounts."""
    counts = {model._meta.label: model.objects.count()
              for model in apps.get_app_config("duels").get_models()}
    counts["auth.User"] = get_user_model().objects.count()
    return counts


def folder_state(root: Path) -> dict[str, bytes]:
    """Every path under `root` (no link followed) with the bytes of its plain files."""
    state = {}
    for folder, names, files in os.walk(root):
        for name in names + files:
            path = Path(folder) / name
            state[str(path.relative_to(root))] = (
                path.read_bytes() if path.is_file() and not path.is_symlink() else b"")
    return state


def stored_panel(root: Path, *, name: str = "genuine") -> Panel:
    """The handmade export written at `root` and stored as a panel with the import's own
    writer (validation's report stated, so no sandbox is needed)."""
    write_export(root)
    entries = export_read(root)
    panel = Panel.objects.create(name=name, manifest_sha256=manifest_sha256(
        entry.row for entry in entries), origin="import")
    for position, entry in enumerate(entries):
        panel_entry_write(panel=panel, position=position, entry=entry,
                          report={"valid": True, "max_steps": entry.row.max_turns})
    return panel


def exchange_records(path: Path) -> list[dict]:
    """Everything stored, exported as an envduels.v1 file at `path`; its records (the format
    line first)."""
    call_command("export", "--out", str(path), verbosity=0)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def forget_everything() -> None:
    """Delete the panels, environments, hints and players, so the file imports anew."""
    for outcome_panel in Panel.objects.all():
        outcome_panel.outcomes.all().delete()
    PanelEntry.objects.all().delete()
    Panel.objects.all().delete()
    Hint.objects.all().delete()
    Environment.objects.all().delete()
    Player.objects.all().delete()


def records_write(records: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n"
                            for record in records), encoding="utf-8")
    return path


def manifest_restate(records: list[dict]) -> None:
    """Recompute each panel record's manifest hash from its entries, as a forger would."""
    for panel in (record for record in records if record.get("kind") == "panel"):
        entries = sorted((record for record in records if record.get("kind") == "panel_entry"
                          and record["panel"] == panel["uuid"]), key=lambda r: r["position"])
        panel["manifest_sha256"] = manifest_sha256(ManifestRow(
            id=entry["entry_id"], author=entry["author"] or None, domain=entry["domain"],
            split=entry["split"], source_sha256=entry["source_sha256"],
            class_name=entry["class_name"], max_turns=entry["max_turns"],
            benchmark_seeds=tuple(entry["benchmark_seeds"]), hints=dict(entry["hints"]))
            for entry in entries)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextmanager
def fifo_watchdog(path: Path, *, seconds: float = 20):
    """Fail, instead of hanging, when a reader waits on the FIFO at `path`: after `seconds` a
    writer opens it (releasing the reader) and the test is failed."""
    waited = threading.Event()

    def release() -> None:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            waited.set()
        except OSError:  # no reader waiting: nothing to release
            pass

    timer = threading.Timer(seconds, release)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
    assert not waited.is_set(), f"the import waited on the FIFO {path.name}"
