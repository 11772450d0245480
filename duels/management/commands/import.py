"""manage.py import FILE.jsonl | DIR | DIR --panel P

A file: an envduels.v1 JSONL exchange file, validated whole, then imported atomically.
A folder with manifest.json: an envduels-v1 export, imported as a new panel (every source's
SHA-256 checked, every class validated in the sandbox); its uuid is printed.
A folder with run.json and --panel P: the original harness's result snapshot, imported as
outside outcomes of panel P once its sources, seeds and hints equal the panel's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.untrusted import UntrustedFileError, untrusted_open
from duels.panels.errors import PanelError
from duels.panels.imports import panel_import
from duels.panels.selectors import panel_find
from duels.panels.snapshot import snapshot_import


class Command(BaseCommand):
    help = ("Import an envduels.v1 JSONL file (all or nothing; re-importing is a no-op), an "
            "envduels-v1 export folder as a panel, or a result snapshot folder (--panel).")
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--panel", default="",
                            help="the panel a result snapshot folder's outcomes belong to")
        parser.add_argument("--name", default="",
                            help="an envduels-v1 export's panel name (default: the folder's)")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if path.is_dir():
            self.import_folder(path, options)
            return
        if options["panel"]:
            raise CommandError(f"{path} is not a folder: --panel takes a result snapshot "
                               "folder (with run.json)")
        try:
            with untrusted_open(path, what=str(path)) as stream:
                report = exchange_import(stream=stream)
        except UntrustedFileError as exc:
            raise CommandError(f"cannot read {exc} (nothing was imported)") from exc
        except ExchangeImportError as exc:
            raise CommandError(f"{options['file']}: {exc} (nothing was imported)") from exc
        self.stdout.write(report.summary())

    def import_folder(self, path: Path, options: dict[str, Any]) -> None:
        try:
            if options["panel"]:
                panel = panel_find(options["panel"])
                report = snapshot_import(root=path, panel=panel)
                self.stdout.write(
                    f"{report.created} outside outcomes of {len(report.models)} models on "
                    f"{report.versions} versions imported into panel {panel.name} "
                    f"({report.skipped} already there, {report.incomplete} incomplete)")
                return
            # lexists: a manifest that is a link or a FIFO is refused by the reader, by name.
            if not os.path.lexists(path / "manifest.json"):
                hint = (" (a result snapshot: add --panel P)"
                        if (path / "run.json").is_file() else "")
                raise CommandError(f"{path} has no manifest.json: not an envduels-v1 "
                                   f"export{hint}")
            panel, created = panel_import(root=path, name=options["name"])
        except PanelError as error:
            raise CommandError(f"{path}: {error} (nothing was imported)") from None
        invalid = panel.entries.exclude(environment__status="valid").count()
        self.stderr.write(
            ("imported" if created else "already imported as")
            + f" panel {panel.name}: {panel.entries.count()} versions ({invalid} invalid), "
            f"manifest {panel.manifest_sha256}")
        self.stdout.write(str(panel.uuid))
