"""What human labels change in the figures: the analytics recomputed without the designs that
adjudicated or majority labels call broken or hint-leaking, stored beside the full figures."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from duels.analytics.data import AnalyticsInput
from duels.selectors.analytics import analytics_input
from duels.selectors.labels import designs_excluded_by_labels


def analytics_labels_effect(*, source: AnalyticsInput, counted: dict[str, Any],
                            computed_at: datetime, resamples: int) -> dict[str, Any]:
    """How many designs labels exclude, which, and each headline figure with and without them."""
    from duels.analytics.compute import analytics_compute
    from duels.analytics.exclusion import headline_moves

    excluded = designs_excluded_by_labels()
    present = {env.content_hash for env in source.environments}
    excluded = {design: labels for design, labels in excluded.items() if design in present}
    effect: dict[str, Any] = {"excluded": len(excluded),
                              "designs": [{"design": d, "labels": labels}
                                          for d, labels in sorted(excluded.items())],
                              "moves": []}
    if excluded:
        remaining = analytics_compute(analytics_input(excluding=list(excluded)),
                                      computed_at=computed_at, resamples=resamples)
        effect["moves"] = headline_moves(counted=counted, excluding=remaining)
    return effect
