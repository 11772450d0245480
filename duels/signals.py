"""Signals between layers that must not import each other.

`data_changed` is sent after rows the analytics figures are computed from changed (a duel
finished, an import, a transfer upload). The analytics service listens (connected in
`DuelsConfig.ready()`): it marks the snapshot stale and queues a refresh. The sender never waits
for the figures and never fails because of them.
"""

from __future__ import annotations

from django.dispatch import Signal

data_changed = Signal()
