"""Format compliance: how often a solver's reply had no readable action, apart from its skill."""

from __future__ import annotations

from collections.abc import Iterable

from duels.analytics.data import ComplianceRecord

CONDITIONS = (("unhinted", False), ("hinted", True))


def _share(errors: int, replies: int) -> float | None:
    return errors / replies if replies else None


def format_error_rates(records: Iterable[ComplianceRecord]) -> list[dict]:
    """Per solver, by name: the share of its replies that had no readable action, overall and
    per condition (`rate` null without replies), with the counts behind each share.

    The one computation of the format-error rate: the player page, the duel page and
    `analytics --json` all show what this returns.
    """
    counts: dict[str, dict[bool, list[int]]] = {}
    for record in records:
        by_condition = counts.setdefault(record.solver, {False: [0, 0], True: [0, 0]})
        by_condition[record.hinted][0] += record.format_errors
        by_condition[record.hinted][1] += record.replies
    rows = []
    for solver in sorted(counts):
        row: dict = {"player": solver}
        errors = replies = 0
        for name, hinted in CONDITIONS:
            condition_errors, condition_replies = counts[solver][hinted]
            row[name] = {"rate": _share(condition_errors, condition_replies),
                         "format_errors": condition_errors, "replies": condition_replies}
            errors, replies = errors + condition_errors, replies + condition_replies
        row.update(rate=_share(errors, replies), format_errors=errors, replies=replies)
        rows.append(row)
    return rows
