"""manage.py panel create --study UUID | --designs HASH,… --name NAME | list | show P [--json]

Panels: frozen sets of environment versions with their benchmark seeds and hints, identified by
their manifest hash (docs/panels.md). P is a panel's uuid, name or manifest-hash prefix.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.models import Study
from duels.panels.create import panel_from_designs, panel_from_study
from duels.panels.errors import PanelError
from duels.panels.selectors import panel_entries, panel_find, panel_list, panel_show_json


class Command(BaseCommand):
    help = "Make, list and show panels (frozen environment versions, seeds and hints)."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="Freeze a study's final versions or designs.")
        source = create.add_mutually_exclusive_group(required=True)
        source.add_argument("--study", help="a study's uuid: its slots' final versions")
        source.add_argument("--designs", help="design hashes (or prefixes), comma-separated")
        create.add_argument("--name", required=True)
        actions.add_parser("list", help="Every panel with its manifest hash.")
        show = actions.add_parser("show", help="A panel's versions, seeds and hint levels.")
        show.add_argument("panel")
        show.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"handle_{options['action']}")(options)
        except PanelError as error:
            raise CommandError(str(error)) from None

    def handle_create(self, options: dict[str, Any]) -> None:
        if options["study"]:
            try:
                study = Study.objects.get(uuid=UUID(options["study"]))
            except (ValueError, Study.DoesNotExist):
                raise CommandError(f"no study {options['study']!r} (give its uuid)") from None
            panel, created = panel_from_study(study=study, name=options["name"])
        else:
            hashes = [part for part in options["designs"].split(",") if part.strip()]
            panel, created = panel_from_designs(hashes=hashes, name=options["name"])
        if not created:
            self.stderr.write(f"the same versions, seeds and hints are panel {panel.name} "
                              "already")
        self.stderr.write(f"panel {panel.name}: {panel.entries.count()} versions, manifest "
                          f"{panel.manifest_sha256}")
        self.stdout.write(str(panel.uuid))

    def handle_list(self, options: dict[str, Any]) -> None:
        for panel in panel_list():
            self.stdout.write(f"{panel.uuid}\t{panel.manifest_sha256[:12]}\t{panel.entry_count}"
                              f" versions\t{panel.origin}\t{panel.name}")

    def handle_show(self, options: dict[str, Any]) -> None:
        panel = panel_find(options["panel"])
        if options["json"]:
            self.stdout.write(json.dumps(panel_show_json(panel), ensure_ascii=False))
            return
        self.stdout.write(f"{panel.name}  {panel.uuid}\nmanifest sha256 {panel.manifest_sha256}")
        for entry in panel_entries(panel):
            state = entry.environment.status
            levels = ",".join(map(str, entry.hint_levels)) or "none"
            self.stdout.write(f"{entry.entry_id}\t{entry.author or '—'}\t{entry.domain}\t"
                              f"seeds {len(entry.benchmark_seeds)}\thints {levels}\t{state}")
