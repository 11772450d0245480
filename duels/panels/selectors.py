"""Reads of panels: finding one by what a person types, its entries, its manifest rows."""

from __future__ import annotations

from uuid import UUID

from django.db.models import Count, QuerySet

from duels.models import Panel, PanelEntry
from duels.panels.errors import PanelError
from duels.panels.manifest import ManifestRow

MIN_HASH_PREFIX = 6


def panel_list() -> QuerySet[Panel]:
    return Panel.objects.annotate(entry_count=Count("entries")).order_by("-created_at")


def panel_find(reference: str) -> Panel:
    """The panel `reference` names: its uuid, its name, or a prefix of its manifest hash."""
    text = (reference or "").strip()
    try:
        return Panel.objects.get(uuid=UUID(text))
    except (ValueError, Panel.DoesNotExist):
        pass
    named = list(Panel.objects.filter(name=text)[:2])
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise PanelError(f"several panels are named {text!r}: give its uuid or manifest hash")
    if len(text) >= MIN_HASH_PREFIX:
        hashed = list(Panel.objects.filter(manifest_sha256__startswith=text.lower())[:2])
        if len(hashed) == 1:
            return hashed[0]
    raise PanelError(f"no panel {text!r} (give a panel's uuid, name or at least "
                     f"{MIN_HASH_PREFIX} characters of its manifest hash; "
                     "`manage.py panel list` lists them)")


def panel_entries(panel: Panel) -> QuerySet[PanelEntry]:
    return (panel.entries.select_related("environment", "environment__author", "hint_1",
                                         "hint_2").order_by("position"))


PANEL_VERSIONS_PAGE = 100  # versions a panel page lists at once (docs/security.md)


def panel_entries_listed(panel: Panel) -> QuerySet[PanelEntry]:
    """The panel's entries for a page: everything but the class files and sources, which a
    page never shows (a panel of 2,000 versions would otherwise load every source a view)."""
    return panel_entries(panel).defer("class_source", "environment__source")


def panel_evaluated_names(*, panel: Panel) -> set[str]:
    """Names of the players evaluated here on `panel` (they have plays of their own on it)."""
    from duels.models import Evaluation

    return set(Evaluation.objects.filter(panel=panel).values_list("player__name", flat=True))


def entry_manifest_row(entry: PanelEntry) -> ManifestRow:
    """The manifest row an entry was frozen with."""
    return ManifestRow(id=entry.entry_id, author=entry.author or None, domain=entry.domain,
                       split=entry.split, source_sha256=entry.source_sha256,
                       class_name=entry.class_name, max_turns=entry.max_turns,
                       benchmark_seeds=tuple(entry.benchmark_seeds), hints=dict(entry.hints))


def panel_show_json(panel: Panel) -> dict:
    """`manage.py panel show P --json` (docs/json-outputs.md)."""
    return {"panel": str(panel.uuid), "name": panel.name,
            "manifest_sha256": panel.manifest_sha256,
            "environments": [{"id": entry.entry_id, "uuid": str(entry.environment.uuid),
                              "author": entry.author or None, "domain": entry.domain,
                              "benchmark_seeds": list(entry.benchmark_seeds),
                              "hint_levels": entry.hint_levels}
                             for entry in panel_entries(panel)]}


def panel_get(panel_uuid: UUID) -> Panel:
    from django.shortcuts import get_object_or_404

    return get_object_or_404(Panel, uuid=panel_uuid)


def panel_outcome_summary(panel: Panel) -> list[dict]:
    """Per imported model: decided plays and successes per condition, and incomplete ones
    (kept apart, never a result). One query."""
    from django.db.models import Q

    rows = (panel.outcomes.values("model").order_by("model").annotate(
        unhinted_decided=Count("id", filter=Q(hinted=False) & ~Q(status="incomplete")),
        unhinted_passed=Count("id", filter=Q(hinted=False, status="success")),
        hinted_decided=Count("id", filter=Q(hinted=True) & ~Q(status="incomplete")),
        hinted_passed=Count("id", filter=Q(hinted=True, status="success")),
        incomplete=Count("id", filter=Q(status="incomplete"))))
    return list(rows)


def panel_evaluations(panel: Panel) -> list[dict]:
    """The panel's evaluations, newest first, each with its plays counted: played (decided),
    incomplete (ended without a result) and open (not ended yet). One query each."""
    from django.db.models import Q

    from duels.models import DONE_STATUSES, EndReason, Evaluation, Status

    decided = Q(episodes__status=Status.FINISHED) | Q(episodes__status=Status.FAILED,
                                                       episodes__end_reason=EndReason.ENV_ERROR)
    rows = (Evaluation.objects.filter(panel=panel).select_related("player", "created_by")
            .annotate(plays=Count("episodes"), played=Count("episodes", filter=decided),
                      ended=Count("episodes", filter=Q(episodes__status__in=DONE_STATUSES)))
            .order_by("-created_at", "-pk"))
    return [{"evaluation": row, "plays": row.plays, "played": row.played,
             "incomplete": row.ended - row.played, "open": row.plays - row.ended}
            for row in rows]


def evaluation_exists(*, evaluation_uuid: UUID | str) -> bool:
    from duels.models import Evaluation

    return Evaluation.objects.filter(uuid=evaluation_uuid).exists()
