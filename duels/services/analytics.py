"""Analytics snapshots: compute every figure in the background and cache the result.

Each snapshot records the data it was computed from (`analytics_fingerprint`). Writes that
change that data send `duels.signals.data_changed`; this service listens, marks the snapshot
stale and queues a background refresh (`analytics_data_changed`; requests within the debounce
window share one task, enqueued through `duels.engine.task_registry`). `manage.py analytics`
recomputes in the foreground when the snapshot is missing or stale; the page shows the
snapshot's age and refreshes it in the background.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.db import DatabaseError
from django.utils import timezone

from duels.analytics.bootstrap import BOOTSTRAP_RESAMPLES
from duels.engine.task_registry import task_named
from duels.models import AnalyticsSnapshot
from duels.selectors.analytics import analytics_fingerprint, analytics_input
from duels.selectors.analytics_snapshots import analytics_latest, analytics_latest_cached
from duels.services.estimates import environment_estimates_store
from duels.services.labels import analytics_labels_effect

logger = logging.getLogger(__name__)

KEEP_SNAPSHOTS = 5
RESAMPLES = BOOTSTRAP_RESAMPLES  # behind every interval, as a published copy's
# Refresh requests within this many seconds of each other share one analytics refresh.
DEBOUNCE_SECONDS = 10


def analytics_refresh(*, resamples: int = RESAMPLES) -> AnalyticsSnapshot:
    """Compute all figures from stored episodes and store them as the newest snapshot."""
    # Imported here: the statistics stack (scipy, datasketch, plotly) costs seconds to import,
    # and only computing figures needs it; pages and commands that read snapshots do not.
    from duels.analytics.compute import analytics_compute

    started = time.perf_counter()
    computed_at = timezone.now()
    # Read the fingerprint first: rows added while computing make the snapshot stale, never
    # falsely current.
    fingerprint = analytics_fingerprint()
    source = analytics_input()
    data = analytics_compute(source, computed_at=computed_at, resamples=resamples)
    # What human labels change: the same figures without designs labelled broken or leaking.
    data["labels"] = analytics_labels_effect(source=source, counted=data,
                                             computed_at=computed_at, resamples=resamples)
    duration_ms = round((time.perf_counter() - started) * 1000)
    snapshot = AnalyticsSnapshot.objects.create(data=data, duration_ms=duration_ms,
                                                fingerprint=fingerprint)
    # computed_at is auto_now_add; keep it equal to the time the figures were read.
    AnalyticsSnapshot.objects.filter(pk=snapshot.pk).update(computed_at=computed_at)
    snapshot.computed_at = computed_at
    environment_estimates_store(irt=data.get("irt"), training=data.get("training"),
                                computed_at=computed_at)
    stale = AnalyticsSnapshot.objects.order_by("-computed_at", "-pk").values_list(
        "pk", flat=True)[KEEP_SNAPSHOTS:]
    AnalyticsSnapshot.objects.filter(pk__in=list(stale)).delete()
    return snapshot


def analytics_is_current(*, snapshot: AnalyticsSnapshot) -> bool:
    """True when nothing marked the snapshot stale and the data's fingerprint is unchanged."""
    return not snapshot.stale and snapshot.fingerprint == analytics_fingerprint()


def analytics_current() -> AnalyticsSnapshot:
    """The newest snapshot when it describes the data as it stands, else one computed now."""
    snapshot = analytics_latest()
    if snapshot is not None and analytics_is_current(snapshot=snapshot):
        return snapshot
    return analytics_refresh()


def analytics_for_reader() -> tuple[AnalyticsSnapshot, bool]:
    """The snapshot a page or the API shows, and whether it is current.

    With no snapshot at all one is computed now (nobody sees "nothing computed"); a stale one
    is shown with its age while a background refresh is queued.
    """
    snapshot = analytics_latest_cached()
    if snapshot is None:
        return analytics_refresh(), True
    current = analytics_is_current(snapshot=snapshot)
    if not current:
        analytics_request_refresh()
    return snapshot, current


def analytics_refresh_pending() -> bool:
    """True when a refresh task is queued and not yet started."""
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(
        task_path=task_named("analytics_refresh").module_path, status=TaskResultStatus.READY
    ).exists()


def analytics_refresh_underway() -> set[str]:
    """The statuses (`READY` queued, `RUNNING`) of refresh tasks not yet done, in one query;
    empty when none is: while it is not, the analytics page keeps asking for new figures."""
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    return set(DBTaskResult.objects.filter(
        task_path=task_named("analytics_refresh").module_path,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
    ).order_by().values_list("status", flat=True).distinct())


def analytics_request_refresh(*, delay_seconds: float = DEBOUNCE_SECONDS) -> bool:
    """Queue a background refresh unless one is already waiting; True when one was queued.

    Never raises a database error to the caller (a finishing duel must not fail because the
    figures could not be queued); the next finished duel asks again.
    """
    try:
        if analytics_refresh_pending():
            return False
        run_after = timezone.now() + timedelta(seconds=delay_seconds)
        task_named("analytics_refresh").using(run_after=run_after).enqueue()
    except DatabaseError:
        logger.exception("could not queue an analytics refresh")
        return False
    return True


def analytics_data_changed() -> bool:
    """Rows the figures are computed from changed (an import, a finished duel, a transfer
    upload): mark the snapshot stale and queue a background refresh. True when one was queued.

    Called on `duels.signals.data_changed` (wired in `DuelsConfig.ready()`). Never raises a
    database error (the change itself must not fail because of the figures).
    """
    try:
        AnalyticsSnapshot.objects.filter(stale=False).update(stale=True)
    except DatabaseError:
        logger.exception("could not mark the analytics snapshot stale")
    return analytics_request_refresh()
