"""manage.py import_transfer FILE.csv — transfer results, every row checked first, then stored
in one transaction; reports which rows count towards the transfer figure and why others do not.

The CSV needs a header row naming its columns (any order): learner, environment, author,
benchmark, before, after (docs/exchange-format.md, "Transfer results")."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.exchange.transfer import TransferImportError, transfer_import_csv
from duels.exchange.untrusted import CSV_FILE, UntrustedFileError, untrusted_read_path


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
            data = untrusted_read_path(Path(options["file"]), what=options["file"],
                                       kind=CSV_FILE)
            report = transfer_import_csv(stream=io.StringIO(data.decode("utf-8-sig"),
                                                            newline=""))
        except UntrustedFileError as exc:
            raise CommandError(f"cannot read {exc}") from exc
        except UnicodeDecodeError:
            raise CommandError(f"{options['file']} is not UTF-8 text (nothing was "
                               "imported)") from None
        except TransferImportError as exc:
            raise CommandError(f"{options['file']}: {exc} (nothing was imported)") from exc
        self.stdout.write(report.summary())
