"""Analytics snapshots: compute every figure in the background and cache the result.

Pages read only the latest snapshot; they never compute a bootstrap on a request. The engine
asks for a refresh after each duel finishes (`duels.engine.queue.analytics_request_refresh`);
requests within the debounce window share one queued task.
"""

from __future__ import annotations

import logging
import time

from django.utils import timezone

from duels.analytics.compute import analytics_compute
from duels.models import AnalyticsSnapshot
from duels.selectors.analytics import analytics_input

logger = logging.getLogger(__name__)

KEEP_SNAPSHOTS = 5


def analytics_refresh() -> AnalyticsSnapshot:
    """Compute all figures from stored episodes and store them as the newest snapshot."""
    started = time.perf_counter()
    computed_at = timezone.now()
    data = analytics_compute(analytics_input(), computed_at=computed_at)
    duration_ms = round((time.perf_counter() - started) * 1000)
    snapshot = AnalyticsSnapshot.objects.create(data=data, duration_ms=duration_ms)
    # computed_at is auto_now_add; keep it equal to the time the figures were read.
    AnalyticsSnapshot.objects.filter(pk=snapshot.pk).update(computed_at=computed_at)
    snapshot.computed_at = computed_at
    stale = AnalyticsSnapshot.objects.order_by("-computed_at", "-pk").values_list(
        "pk", flat=True)[KEEP_SNAPSHOTS:]
    AnalyticsSnapshot.objects.filter(pk__in=list(stale)).delete()
    return snapshot


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
        .only("pk", "computed_at", "duration_ms").first()
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
    return cached
