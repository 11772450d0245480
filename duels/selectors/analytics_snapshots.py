"""The newest analytics snapshot, for the pages that read it (duels.services.analytics
refreshes it)."""

from __future__ import annotations

from duels.models import AnalyticsSnapshot


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
