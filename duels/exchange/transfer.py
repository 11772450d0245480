"""Transfer results from CSV: learner, environment (uuid, optional), author (player, optional),
benchmark, before, after. Every row is checked first; then all are written in one transaction.
A row identical to a stored result is skipped, so re-importing a file adds nothing.

The file's format is in docs/exchange-format.md ("Transfer results"). A stored row counts towards
the transfer figure only when the learner solved that environment (or that author's
environments) both without and with the hint; the report says which rows count and why the
others do not.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO
from uuid import UUID

from django.db import transaction
from django.db.models import Q

from duels.models import Condition, Environment, Episode, Player, Status, TransferResult
from duels.signals import data_changed

COLUMNS = ("learner", "environment", "author", "benchmark", "before", "after")


class TransferImportError(Exception):
    """A row cannot be imported; the message names its line."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


NEVER_PLAYED = "the learner never solved this environment (or this author's environments)"
ONE_CONDITION = "the learner solved it in one condition only (needs unhinted and hinted episodes)"
MIN_USABLE = 3  # the transfer figure needs at least this many usable rows


@dataclass(frozen=True)
class TransferImportReport:
    created: int
    skipped: int
    usable: int = 0
    unusable: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """What was stored, which rows count towards the transfer figure, and why not."""
        lines = [f"imported {self.created} transfer results; {self.skipped} already present"]
        total = self.usable + sum(self.unusable.values())
        lines.append(f"{self.usable} of {total} rows count towards the transfer figure")
        lines.extend(f"  not counted ({count}): {reason}"
                     for reason, count in self.unusable.items())
        if self.usable < MIN_USABLE:
            lines.append(f"the transfer figure needs at least {MIN_USABLE} counted rows; it stays "
                         "unknown until then")
        return "\n".join(lines)


def transfer_row_problem(*, result: TransferResult) -> str:
    """Why `result` cannot join the learner's hint gain (as analytics does), or "" when it can."""
    played = Episode.objects.filter(
        Q(duel__status=Status.FINISHED) | Q(status=Status.FINISHED, success__isnull=False),
        solver=result.learner,
    )
    if result.environment is not None:
        played = played.filter(environment=result.environment)
    else:
        played = played.filter(environment__author=result.author)
    conditions = set(played.values_list("condition", flat=True).distinct())
    if not conditions:
        return NEVER_PLAYED
    if conditions != {Condition.HINTED, Condition.UNHINTED}:
        return ONE_CONDITION
    return ""


def _player(value: str, *, column: str, line: int) -> Player:
    try:
        lookup = {"uuid": UUID(value)}
    except ValueError:
        lookup = {"name": value}
    player = Player.objects.filter(**lookup).first()
    if player is None:
        raise TransferImportError(f"{column} {value!r} is not a known player", line=line)
    return player


def _score(value: str, *, column: str, line: int) -> float:
    try:
        number = float(value)
    except ValueError:
        raise TransferImportError(f"{column} must be a number, got {value!r}", line=line) from None
    if not math.isfinite(number):
        raise TransferImportError(f"{column} must be a finite number", line=line)
    return number


def _row(row: dict[str, str | None], line: int) -> TransferResult:
    values = {key: (row.get(key) or "").strip() for key in COLUMNS}
    if not values["learner"]:
        raise TransferImportError("learner is required", line=line)
    if not values["benchmark"]:
        raise TransferImportError("benchmark is required", line=line)
    if len(values["benchmark"]) > 200:
        raise TransferImportError("benchmark is longer than 200 characters", line=line)
    if not values["environment"] and not values["author"]:
        raise TransferImportError("give an environment uuid or an author", line=line)
    environment = None
    if values["environment"]:
        try:
            environment = Environment.objects.filter(uuid=UUID(values["environment"])).first()
        except ValueError:
            raise TransferImportError("environment must be a uuid", line=line) from None
        if environment is None:
            raise TransferImportError(
                f"environment {values['environment']} is not in the database", line=line
            )
    author = _player(values["author"], column="author", line=line) if values["author"] else None
    return TransferResult(
        learner=_player(values["learner"], column="learner", line=line),
        environment=environment,
        author=author,
        benchmark=values["benchmark"],
        before=_score(values["before"], column="before", line=line),
        after=_score(values["after"], column="after", line=line),
    )


def _csv_problem(error: csv.Error) -> str:
    """What a malformed CSV line is, in words (the csv module's message is terse)."""
    text = str(error)
    if "field larger than field limit" in text:
        return (f"a cell is longer than {csv.field_size_limit():,} characters (no column "
                "needs more than a few hundred); is this the right file?")
    return f"not readable as CSV: {text}"


def transfer_import_csv(*, stream: TextIO) -> TransferImportReport:
    """Check every row of the CSV, then store the new ones in one transaction."""
    reader = csv.DictReader(stream)
    try:
        return _import_rows(reader)
    except csv.Error as error:
        # line_num counts the lines read before the one that failed.
        raise TransferImportError(_csv_problem(error), line=reader.line_num + 1) from None


def _import_rows(reader: csv.DictReader) -> TransferImportReport:
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [name for name in ("learner", "benchmark", "before", "after") if name not in header]
    if missing:
        found = ",".join(header)[:80] or "nothing"
        raise TransferImportError(
            f"missing column(s): {', '.join(missing)}. The first line must be the header row "
            f"{','.join(COLUMNS)} (environment and author may be empty cells); found {found!r}",
            line=1,
        )
    reader.fieldnames = header
    rows = []
    for row in reader:
        if row.get(None):
            raise TransferImportError("more cells than columns", line=reader.line_num)
        if not any((value or "").strip() for value in row.values()):
            continue
        rows.append(_row(row, reader.line_num))
    created = 0
    with transaction.atomic():
        for result in rows:
            duplicate = TransferResult.objects.filter(
                learner=result.learner, environment=result.environment, author=result.author,
                benchmark=result.benchmark, before=result.before, after=result.after,
            ).exists()
            if not duplicate:
                result.save()
                created += 1
    if created:
        data_changed.send(sender=TransferResult)
    problems = Counter(transfer_row_problem(result=result) for result in rows)
    usable = problems.pop("", 0)
    return TransferImportReport(created=created, skipped=len(rows) - created, usable=usable,
                                unusable=dict(problems))
