"""Fixtures shared by the engine tests."""

from __future__ import annotations

import pytest

from sandbox_runner import available_backends
from tests.helpers.parts import need


@pytest.fixture
def sandbox_backend(settings) -> str:
    """A working sandbox backend (bwrap when it works, the fastest here), set for the engine."""
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    return settings.ENVDUELS_SANDBOX
