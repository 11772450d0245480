"""How many bootstrap resamples every interval of the figures draws.

One number for the site (its analytics snapshot, `analytics --json`, the dashboard) and every
published copy (`export --format site`): with the same data, the same count and the same seed,
a published figure equals the site's at the moment of publishing (docs/publishing.md). A copy
that drew fewer would differ in its intervals, and so in its ranks. Kept free of numpy: pages
and commands read this number without loading the statistics stack (bootstrap_weights.py draws
the resamples).
"""

from __future__ import annotations

BOOTSTRAP_RESAMPLES = 1000
