"""How a backend is chosen: `auto` prefers docker, then bwrap, then unshare, and fails closed."""

from __future__ import annotations

import logging

import pytest

import sandbox_runner.backends as backends
from sandbox_runner import (
    SandboxUnavailable,
    available_backends,
    open_sandbox,
    resolve_backend,
)
from sandbox_runner.pool import POOL
from tests.sandbox_runner.conftest import ECHO_ENV, TEST_LIMITS


@pytest.fixture
def probes(monkeypatch):
    """Replace every backend probe and start with fakes that record what was attempted."""
    state = {"reasons": dict.fromkeys(backends.BACKENDS, "missing on purpose"),
             "started": []}
    for name, backend in backends.BACKENDS.items():
        monkeypatch.setattr(backend, "unavailable_reason",
                            lambda name=name: state["reasons"][name])
        monkeypatch.setattr(backend, "start",
                            lambda limits, name=name: state["started"].append(name))
    monkeypatch.setattr(backends, "_probe_cache", {})
    POOL.clear()
    return state


def test_auto_fails_closed_and_runs_nothing(probes, settings):
    settings.ENVDUELS_SANDBOX = "auto"
    with pytest.raises(SandboxUnavailable, match="no sandbox backend works") as raised:
        open_sandbox(ECHO_ENV, limits=TEST_LIMITS)
    assert "bubblewrap" in str(raised.value)
    assert probes["started"] == []
    assert available_backends() == []


def test_auto_prefers_docker_then_bwrap_then_unshare(probes, settings):
    settings.ENVDUELS_SANDBOX = "auto"
    probes["reasons"]["unshare"] = None
    assert resolve_backend() == "unshare"
    backends._probe_cache.clear()
    probes["reasons"]["bwrap"] = None
    assert resolve_backend() == "bwrap"
    backends._probe_cache.clear()
    probes["reasons"]["docker"] = None
    assert resolve_backend() == "docker"
    assert available_backends() == ["docker", "bwrap", "unshare"]


def test_auto_never_picks_unsafe_local(probes, settings):
    settings.ENVDUELS_SANDBOX = "auto"
    probes["reasons"]["unsafe-local"] = None
    with pytest.raises(SandboxUnavailable):
        resolve_backend("auto")


def test_setting_names_the_backend(probes, settings):
    settings.ENVDUELS_SANDBOX = "bwrap"
    probes["reasons"]["bwrap"] = None
    probes["reasons"]["docker"] = None
    assert resolve_backend() == "bwrap"
    settings.ENVDUELS_SANDBOX = "unshare"
    with pytest.raises(SandboxUnavailable, match="unshare is unavailable: missing on purpose"):
        resolve_backend()


def test_unknown_backend_name_is_refused():
    with pytest.raises(SandboxUnavailable, match="unknown sandbox backend"):
        resolve_backend("chroot")


def test_unsafe_local_warns_on_every_use(caplog):
    with caplog.at_level(logging.WARNING, logger="sandbox_runner"):
        for _ in range(2):
            with open_sandbox(ECHO_ENV, limits=TEST_LIMITS, backend="unsafe-local") as sandbox:
                assert sandbox.backend_name == "unsafe-local"
                assert sandbox.step("ping").observation == "pong"
    warnings = [r for r in caplog.records if "WITHOUT any isolation" in r.getMessage()]
    assert len(warnings) == 2
