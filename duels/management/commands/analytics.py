"""`manage.py analytics [--refresh] [--json]`: print the analytics figures for the data as it
stands (the stored snapshot when it is current, else recomputed first).

`--study UUID` prints a study's own figures instead (docs/json-outputs.md): per model, per
environment version and head to head, as the original harness names and defines them.
`--panel P` prints a panel's ranking: every player that played it, evaluated here or imported as
outside outcomes, with the same figures (`--hint-level 2` for evaluations of the graded hint)."""

from __future__ import annotations

import json
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from duels.analytics.public import design_shape
from duels.management.commands._text import analytics_lines, panel_lines, study_lines
from duels.models import Study
from duels.services.analytics import analytics_current, analytics_refresh

# What `analytics --study --json` prints: the study's figures under the original's names.
STUDY_KEYS = ("headline", "roles", "models", "environments", "head_to_head")
# And `analytics --panel --json`: a panel's authors played no duels, so no head to head.
PANEL_KEYS = ("headline", "roles", "models", "environments")


def _part(figures: dict, key: str):
    """One part of the figures as printed: the headline as computed (figures stored before
    it existed get it now), every list as a list."""
    if key == "headline":
        from duels.studies.headline import headline_of

        return headline_of(figures)
    if key == "roles":
        from duels.studies.answer import role_columns

        return role_columns()
    return figures.get(key) or []


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
        parser.add_argument("--panel", default="",
                            help="a panel (uuid, name or manifest-hash prefix): its ranking")
        parser.add_argument("--hint-level", type=int, default=1,
                            help="with --panel: the ranking of plays of this hint level")

    def handle(self, *args, **options) -> None:
        if options["study"] and options["panel"]:
            raise CommandError("name a --study or a --panel, not both")
        if options["study"]:
            self.study(options)
            return
        if options["panel"]:
            self.panel(options)
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
            from duels.studies.hint_evidence import environment_rows_hint_mattered

            shown = {key: _part(figures, key) for key in STUDY_KEYS}
            shown["environments"] = environment_rows_hint_mattered(  # figures stored before it
                study_id=study.pk, rows=shown["environments"])
            self.stdout.write(json.dumps(shown, indent=2))
            return
        self.stdout.write("\n".join(study_lines(study=study, figures=figures)))

    def panel(self, options) -> None:
        from duels.panels.errors import PanelError
        from duels.panels.figures_cache import panel_figures_current, panel_figures_refresh
        from duels.panels.selectors import panel_find

        try:
            panel = panel_find(options["panel"])
        except PanelError as exc:
            raise CommandError(str(exc)) from None
        stored = (panel_figures_refresh(panel=panel) if options["refresh"]
                  else panel_figures_current(panel=panel))
        figures = stored["levels"].get(str(options["hint_level"]))
        if figures is None:
            raise CommandError(f"nothing on panel {panel.name} was played at hint level "
                               f"{options['hint_level']} (levels played: "
                               f"{', '.join(sorted(stored['levels']))})")
        if options["json"]:
            from django.db.models import Q

            from duels.studies.hint_evidence import rows_hint_mattered

            shown = {key: _part(figures, key) for key in PANEL_KEYS}
            shown["environments"] = rows_hint_mattered(
                plays=Q(evaluation__panel=panel, evaluation__hint_level=options["hint_level"]),
                rows=shown["environments"])
            self.stdout.write(json.dumps(shown, indent=2))
            return
        self.stdout.write("\n".join(panel_lines(panel=panel, figures=figures,
                                                 computed_at=stored.get("computed_at"))))
