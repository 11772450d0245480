"""Reads for format compliance: the counts behind each solver's format-error rate."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from duels.analytics.compliance import format_error_rates
from duels.analytics.data import ComplianceRecord
from duels.models import Condition, Duel, Player, Step


def format_error_counts(*, steps: QuerySet[Step]) -> tuple[ComplianceRecord, ...]:
    """Replies (steps after the reset) and format errors among `steps`, per solver and
    condition. One query."""
    grouped = (
        steps.filter(index__gte=1).order_by()
        .values("episode__solver__name", "episode__condition")
        .annotate(replies=Count("pk"), format_errors=Count("pk", filter=~Q(format_error="")))
    )
    return tuple(
        ComplianceRecord(row["episode__solver__name"],
                         row["episode__condition"] == Condition.HINTED,
                         row["replies"], row["format_errors"])
        for row in grouped
    )


def player_format_errors(*, player: Player) -> dict | None:
    """The player's format-error rates as a solver (every stored reply), or None without any."""
    rows = format_error_rates(format_error_counts(steps=Step.objects.filter(
        episode__solver=player)))
    return rows[0] if rows else None


def duel_format_errors(*, duel: Duel) -> list[dict]:
    """Each solver's format-error rates in this duel's episodes."""
    return format_error_rates(format_error_counts(steps=Step.objects.filter(episode__duel=duel)))
