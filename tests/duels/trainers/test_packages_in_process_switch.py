"""Exported packages run design code outside a sandbox only when ENVDUELS_ALLOW_IN_PROCESS=1
says so, as their READMEs say: a trainer's ENVDUELS_SANDBOX=unsafe-local (EnvDuels' own switch)
is refused by every package kind."""

from __future__ import annotations

import pytest

from duels.trainers.rl_runtime import designs, envduels_v1_env
from sandbox_runner import SandboxUnavailable

SOURCE = "class Environment:\n    def reset(self, seed):\n        return 'hi'\n"


@pytest.fixture
def unsafe_local(settings, monkeypatch):
    settings.ENVDUELS_SANDBOX = "unsafe-local"
    monkeypatch.delenv("ENVDUELS_ALLOW_IN_PROCESS", raising=False)


def test_trainer_packages_refuse_unsafe_local_without_the_opt_in(unsafe_local, monkeypatch):
    with pytest.raises(SandboxUnavailable, match="ENVDUELS_ALLOW_IN_PROCESS=1"):
        designs.require_sandbox()
    with pytest.raises(SandboxUnavailable):
        designs.open_design({"source": SOURCE})
    monkeypatch.setenv("ENVDUELS_ALLOW_IN_PROCESS", "1")
    assert designs.require_sandbox() == "unsafe-local"


def test_the_envduels_v1_class_refuses_unsafe_local_without_the_opt_in(unsafe_local,
                                                                        monkeypatch):
    with pytest.raises(RuntimeError, match="ENVDUELS_ALLOW_IN_PROCESS=1"):
        envduels_v1_env.open_runner(SOURCE)
    monkeypatch.setenv("ENVDUELS_ALLOW_IN_PROCESS", "1")
    runner = envduels_v1_env.open_runner(SOURCE)
    assert runner.backend_name == "in-process" and runner.reset(0) == "hi"
    runner.close()
