"""Real parts (Docker, Chromium, Redis, PostgreSQL, sandboxes) that some tests need.

A missing part skips the test with a reason; with ENVDUELS_REQUIRE_ALL=1 (set by .ci/run) it
fails the test instead, so CI can never go green by skipping.
"""

from __future__ import annotations

import os

import pytest


def require_all() -> bool:
    return os.environ.get("ENVDUELS_REQUIRE_ALL", "") not in {"", "0", "false", "no"}


def need(available: bool, reason: str) -> None:
    """Skip (or, under ENVDUELS_REQUIRE_ALL=1, fail) the calling test unless `available`."""
    if available:
        return
    if require_all():
        pytest.fail(f"required part missing (ENVDUELS_REQUIRE_ALL=1): {reason}", pytrace=False)
    pytest.skip(reason)
