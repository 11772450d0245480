"""`manage.py analytics [--refresh] [--json]`: print the analytics figures for the data as it
stands (the stored snapshot when it is current, else recomputed first)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from duels.analytics.public import design_shape
from duels.management.commands._text import analytics_lines
from duels.services.analytics import analytics_current, analytics_refresh


class Command(BaseCommand):
    help = ("Print the analytics figures (machine-readable with --json), recomputed first when the "
            "data changed since the last computation; --refresh always recomputes.")
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
        parser.add_argument("--refresh", action="store_true",
                            help="recompute from stored episodes before printing")

    def handle(self, *args, **options) -> None:
        snapshot = analytics_refresh() if options["refresh"] else analytics_current()
        data = snapshot.data
        if options["json"]:
            self.stdout.write(json.dumps(design_shape(data), indent=2))
            return
        self.stdout.write("\n".join(analytics_lines(data)))
