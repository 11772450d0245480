"""The panel's ranking as last computed, and whether it still describes the panel's plays.

Pages answer from the ranking stored beside the panel (PanelFigures), never by computing it in a
request, as the study's figures do (duels/studies/figures_cache.py): the stored figures carry the
fingerprint of the data they were computed from; while the data has moved on, a reader gets them
with `current` False and a background refresh is queued (one at a time per panel).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from datetime import timedelta

from django.db import DatabaseError
from django.db.models import Count, Max
from django.utils import timezone

from duels.engine.task_registry import task_named
from duels.models import (
    DONE_STATUSES,
    EnvironmentStatus,
    Episode,
    OutsideOutcome,
    Panel,
    PanelFigures,
    Status,
)
from duels.studies.figures_cache import FIGURES_SHAPE

logger = logging.getLogger(__name__)

REFRESH_TASK = "panel_figures_refresh"
DEBOUNCE_SECONDS = 5
RUNNING_REFRESH_SECONDS = 30  # an evaluated panel's ranking is recomputed at most this often
HINT_LEVELS = (1, 2)


def panel_figures_fingerprint(*, panel: Panel) -> str:
    """What the ranking would be computed from now: the ended plays of its evaluations (how
    many, the latest end), its outside outcomes (how many, the newest) and its valid versions."""
    plays = Episode.objects.filter(evaluation__panel=panel, status__in=DONE_STATUSES).aggregate(
        count=Count("pk"), last=Max("finished_at"))
    outcomes = OutsideOutcome.objects.filter(panel=panel).aggregate(count=Count("pk"),
                                                                    last=Max("pk"))
    valid = panel.entries.filter(environment__status=EnvironmentStatus.VALID).count()
    text = json.dumps([plays["count"], str(plays["last"]), outcomes["count"],
                       outcomes["last"], valid, FIGURES_SHAPE])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def panel_figures_compute(*, panel: Panel) -> dict:
    """The ranking of every hint level some evaluation or outcome played: {"1": …, "2": …}."""
    # The figures bring numpy and scipy: imported here, off the web process's start-up path.
    from duels.panels.ranking import panel_ranking_compute

    levels = set(OutsideOutcome.objects.filter(panel=panel).values_list("hint_level", flat=True))
    levels |= set(panel.evaluations.values_list("hint_level", flat=True))
    return {str(level): panel_ranking_compute(panel=panel, hint_level=level)
            for level in sorted(levels | {1}) if level in HINT_LEVELS}


def panel_figures_refresh(*, panel: Panel) -> dict:
    """Compute the panel's ranking and store it with the fingerprint of its data."""
    started = time.perf_counter()
    # The fingerprint first: plays ending meanwhile make the figures stale, never falsely
    # current.
    fingerprint = panel_figures_fingerprint(panel=panel)
    computed_at = timezone.now()
    figures = {"levels": panel_figures_compute(panel=panel),
               "computed_at": computed_at.isoformat()}
    figures["duration_ms"] = round((time.perf_counter() - started) * 1000)
    PanelFigures.objects.update_or_create(panel=panel, defaults={
        "figures": figures, "fingerprint": fingerprint, "computed_at": computed_at})
    return figures


def panel_figures_refresh_by_uuid(*, panel_uuid: str) -> int:
    """The background task's body: milliseconds the refresh took."""
    panel = Panel.objects.filter(uuid=panel_uuid).first()
    return 0 if panel is None else panel_figures_refresh(panel=panel)["duration_ms"]


def panel_figures_pending(*, panel: Panel) -> bool:
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(
        task_path=task_named(REFRESH_TASK).module_path,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
        args_kwargs__kwargs__panel_uuid=str(panel.uuid),
    ).exists()


def panel_figures_request(*, panel: Panel, delay_seconds: float = DEBOUNCE_SECONDS) -> bool:
    """Queue a background refresh of the panel's ranking unless one is queued or running;
    while an evaluation runs, at most every RUNNING_REFRESH_SECONDS. Never raises a database
    error to the caller."""
    try:
        if panel_figures_pending(panel=panel):
            return False
        run_after = timezone.now() + timedelta(seconds=delay_seconds)
        computed_at = PanelFigures.objects.filter(panel=panel).values_list(
            "computed_at", flat=True).first()
        if computed_at is not None and panel.evaluations.filter(status=Status.RUNNING).exists():
            run_after = max(run_after, computed_at + timedelta(seconds=RUNNING_REFRESH_SECONDS))
        task_named(REFRESH_TASK).using(run_after=run_after).enqueue(panel_uuid=str(panel.uuid))
    except DatabaseError:
        logger.exception("could not queue a refresh of panel %s's ranking", panel.uuid)
        return False
    return True


def panel_figures_stored(*, panel: Panel) -> tuple[dict | None, bool]:
    """The stored ranking (None before the first computation) and whether it is current; a
    stale or missing one queues a background refresh."""
    stored = PanelFigures.objects.filter(panel=panel).values_list("figures",
                                                                   "fingerprint").first()
    figures, fingerprint = stored if stored else (None, "")
    current = figures is not None and fingerprint == panel_figures_fingerprint(panel=panel)
    if not current:
        panel_figures_request(panel=panel)
    return figures, current


def panel_figures_current(*, panel: Panel) -> dict:
    """The ranking as the data stands: the stored one when current, else computed now (the
    command line's `analytics --panel`)."""
    stored = PanelFigures.objects.filter(panel=panel).values_list("figures",
                                                                   "fingerprint").first()
    if stored and stored[0] is not None and stored[1] == panel_figures_fingerprint(panel=panel):
        return stored[0]
    return panel_figures_refresh(panel=panel)
