"""manage.py import_transfer FILE.csv — transfer results, every row checked first, then stored
in one transaction; reports which rows count towards the transfer figure and why others do not.

The CSV needs a header row naming its columns (any order): learner, environment, author,
benchmark, before, after (docs/exchange-format.md, "Transfer results")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.exchange.transfer import TransferImportError, transfer_import_csv


class Command(BaseCommand):
    help = (
        "Import transfer results from a CSV file with a header row: learner (player name or uuid), "
        "environment (uuid) and/or author (player), benchmark, before, after (scores). A row "
        "counts towards the transfer figure when the learner solved that environment (or that "
        "author's environments) with and without the hint. See docs/exchange-format.md."
    )
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="CSV with the header learner,environment,author,"
                            "benchmark,before,after (environment or author may be empty)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], encoding="utf-8-sig", newline="") as stream:
                report = transfer_import_csv(stream=stream)
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc}") from exc
        except TransferImportError as exc:
            raise CommandError(f"{options['file']}: {exc} (nothing was imported)") from exc
        self.stdout.write(report.summary())
