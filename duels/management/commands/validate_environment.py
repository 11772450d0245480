"""`manage.py validate_environment FILE.py [--hint TEXT]... [--json]`: the validation a duel runs.

For people writing environments by hand: every check of docs/environments.md runs in the
sandbox, exactly as before a duel, and the report is printed. Exit status 1 when invalid.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from duels.engine.validation import environment_validation_report
from duels.selectors.environments import after_play_lines, design_voided_evidence
from sandbox_runner import SandboxUnavailable

DOCS_POINTER = "see docs/environments.md for the contract and every check"


class Command(BaseCommand):
    help = "Validate an environment file in the sandbox, as a duel does before any episode."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path, help="environment source file (Python)")
        parser.add_argument("--hint", action="append", default=[],
                            help="a hint that must not appear in any text the environment returns "
                                 "(repeatable)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, file: Path, hint: list[str], json: bool, **options) -> None:
        try:
            source = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"cannot read {file}: {error}") from None
        try:
            report = environment_validation_report(source=source, hint_texts=hint,
                                                   backend=settings.ENVDUELS_SANDBOX)
        except SandboxUnavailable as error:
            raise CommandError(f"no sandbox can run here: {error}") from None
        # The same source caught after play here before: its evidence is part of the report.
        evidence = design_voided_evidence(source=source)
        if evidence is not None:
            report["after_play"], report["valid"] = evidence, False
        if json:
            self.stdout.write(_dumps(report))
        else:
            verdict = "valid" if report["valid"] else "INVALID"
            self.stdout.write(f"{file}: {verdict} (backend {report['backend'] or '—'}, "
                              f"max_steps {report['max_steps'] or '—'})")
            for check in report["checks"]:
                mark = "ok  " if check["passed"] else "FAIL"
                self.stdout.write(f"  {mark} {check['name']}: {check['detail']}")
            for warning in report.get("warnings", []):
                self.stdout.write(f"  warning: {warning}")
            if evidence is not None:
                self.stdout.write(after_play_lines(evidence))
        if not report["valid"]:
            raise CommandError(f"{file} is not a valid environment; {DOCS_POINTER}")


def _dumps(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False)
