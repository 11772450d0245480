"""manage.py import FILE.jsonl — validate the whole envduels.v1 file, then import it atomically."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.exchange.importer import ExchangeImportError, exchange_import


class Command(BaseCommand):
    help = "Import an envduels.v1 JSONL file (all or nothing; re-importing is a no-op)."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], "rb") as stream:
                report = exchange_import(stream=stream)
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc}") from exc
        except ExchangeImportError as exc:
            raise CommandError(f"{options['file']}: {exc} (nothing was imported)") from exc
        self.stdout.write(report.summary())
