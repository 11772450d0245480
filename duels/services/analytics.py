"""Analytics snapshots: compute every figure in the background and cache the result.

Each snapshot records the data it was computed from (`analytics_fingerprint`). Writes that
change that data mark the snapshot stale and queue a background refresh
(`duels.engine.queue.analytics_data_changed`; requests within the debounce window share one
task). `manage.py analytics` recomputes in the foreground when the snapshot is missing or stale;
the page shows the snapshot's age and refreshes it in the background.
"""

from __future__ import annotations

import logging
import time

from django.utils import timezone

from duels.engine.queue import analytics_request_refresh
from duels.models import AnalyticsSnapshot
from duels.selectors.analytics import analytics_fingerprint, analytics_input
from duels.services.estimates import environment_estimates_store
from duels.services.labels import analytics_labels_effect

logger = logging.getLogger(__name__)

KEEP_SNAPSHOTS = 5
RESAMPLES = 1000  # bootstrap resamples behind every interval


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


def analytics_latest() -> AnalyticsSnapshot | None:
    """The newest snapshot, or None before the first computation."""
    return AnalyticsSnapshot.objects.order_by("-computed_at", "-pk").first()


# The parsed data of the newest snapshot, per process: the page re-reads only the row's id and
# time, and parses the (large) JSON again only when a newer snapshot exists.
_parsed: dict[tuple, AnalyticsSnapshot] = {}


def analytics_latest_cached() -> AnalyticsSnapshot | None:
    """Like `analytics_latest`, but reuses this process's parsed copy of an unchanged snapshot."""
    head = (
        AnalyticsSnapshot.objects.order_by("-computed_at", "-pk")
        .only("pk", "computed_at", "duration_ms", "stale").first()
    )
    if head is None:
        return None
    key = (head.pk, head.computed_at)
    cached = _parsed.get(key)
    if cached is None:
        cached = AnalyticsSnapshot.objects.filter(pk=head.pk).first()
        if cached is None:  # replaced by a newer snapshot meanwhile
            return analytics_latest()
        _parsed.clear()
        _parsed[key] = cached
    # A write may have marked this very snapshot stale since it was parsed.
    cached.stale = head.stale
    return cached
