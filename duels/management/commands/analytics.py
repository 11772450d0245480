"""`manage.py analytics [--refresh] [--json]`: print the analytics figures for the data as it
stands (the stored snapshot when it is current, else recomputed first).

`--study UUID` prints a study's own figures instead (docs/json-outputs.md): per model, per
environment version and head to head, as the original harness names and defines them."""

from __future__ import annotations

import json
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from duels.analytics.public import design_shape
from duels.management.commands._text import analytics_lines, study_lines
from duels.models import Study
from duels.services.analytics import analytics_current, analytics_refresh

# What `analytics --study --json` prints: the study's figures under the original's names.
STUDY_KEYS = ("models", "environments", "head_to_head")


class Command(BaseCommand):
    help = ("Print the analytics figures (machine-readable with --json), recomputed first when the "
            "data changed since the last computation; --refresh always recomputes; --study UUID "
            "prints that study's figures.")
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
        parser.add_argument("--refresh", action="store_true",
                            help="recompute from stored episodes before printing")
        parser.add_argument("--study", default="", help="a study's uuid: its own figures")

    def handle(self, *args, **options) -> None:
        if options["study"]:
            self.study(options)
            return
        snapshot = analytics_refresh() if options["refresh"] else analytics_current()
        data = snapshot.data
        if options["json"]:
            self.stdout.write(json.dumps(design_shape(data), indent=2))
            return
        self.stdout.write("\n".join(analytics_lines(data)))

    def study(self, options) -> None:
        from duels.studies.results import study_figures_current, study_figures_refresh

        try:
            key = UUID(options["study"])
        except ValueError:
            raise CommandError(f"{options['study']!r} is not a study's uuid") from None
        study = Study.objects.filter(uuid=key).first()
        if study is None:
            raise CommandError(f"no study has uuid {key} (`manage.py study …` starts one; the "
                               "studies page lists them)")
        figures = (study_figures_refresh(study=study) if options["refresh"]
                   else study_figures_current(study=study))
        if options["json"]:
            self.stdout.write(json.dumps({key: figures.get(key) or [] for key in STUDY_KEYS},
                                         indent=2))
            return
        self.stdout.write("\n".join(study_lines(study=study, figures=figures)))
