"""manage.py import_transfer FILE.csv — transfer results (learner, environment, author,
benchmark, before, after), every row checked first, then stored in one transaction."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.exchange.transfer import TransferImportError, transfer_import_csv


class Command(BaseCommand):
    help = "Import transfer results from CSV (columns: learner, environment, author, benchmark, "
    help += "before, after)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], encoding="utf-8-sig", newline="") as stream:
                report = transfer_import_csv(stream=stream)
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc}") from exc
        except TransferImportError as exc:
            raise CommandError(f"{options['file']}: {exc} (nothing was imported)") from exc
        self.stdout.write(
            f"imported {report.created} transfer results; {report.skipped} already present"
        )
