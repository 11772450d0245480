"""`manage.py analytics [--refresh] [--json]`: print the cached analytics figures."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from duels.analytics.compute import design_shape
from duels.services.analytics import analytics_latest, analytics_refresh


class Command(BaseCommand):
    help = "Print the analytics figures (DESIGN.md shape with --json); --refresh recomputes first."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
        parser.add_argument("--refresh", action="store_true",
                            help="recompute from stored episodes before printing")

    def handle(self, *args, **options) -> None:
        snapshot = analytics_refresh() if options["refresh"] else analytics_latest()
        if snapshot is None:
            raise CommandError("No analytics computed yet; run with --refresh.")
        data = snapshot.data
        if options["json"]:
            self.stdout.write(json.dumps(design_shape(data), indent=2))
            return
        self.stdout.write(f"computed at {data['computed_at']} ({snapshot.duration_ms} ms)")
        if not data.get("enough"):
            self.stdout.write("not enough duels yet")
            return
        for row in data["ratings"]:
            self.stdout.write(
                f"{row['rank']:>3}  {row['player']:<30} {row['rating']:>7.1f} "
                f"[{row['low']:.0f}, {row['high']:.0f}]  {row['duels']} duels"
            )
        for key in ("divergence", "transitivity", "transfer"):
            self.stdout.write(f"{key}: {json.dumps(data[key])}")
