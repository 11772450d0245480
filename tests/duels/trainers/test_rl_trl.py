"""The TRL package's class, handed to the real `trl` GRPOTrainer as its environment_factory in
a cached virtualenv (torch's CPU build, no GPU, a tiny model from a config): TRL validates it
(reset, one tool `act`, the reward `get_reward`), runs a training step with it, and the class
plays a design to success."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from duels.trainers.rl_packages import DEPENDENCIES
from sandbox_runner import available_backends
from tests.duels.trainers.rl_sets import make_rl_set
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.duels.trainers.trainer_venvs import trainer_venv, uv_binary, venv_environment
from tests.helpers.parts import need

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

CHECK = Path(__file__).with_name("trl_check.py")
# torch first (its CPU build), then trl and what the package declares.
TRL = [["torch==2.13.0"], [r.strip('"') for r in DEPENDENCIES["trl"]]]


@pytest.mark.timeout(2400)
def test_trl_validates_the_class_trains_a_step_and_the_class_plays_to_success(make, tmp_path):
    need(sandbox_works(), "no sandbox backend works here")
    need(uv_binary() is not None, "uv is not installed")
    make_rl_set(make)
    package = tmp_path / "pkg"
    name = f"envduels_trl_{os.getpid()}"
    call_command("export", "--format", "trl", "--out", str(package), "--name", name)
    venv = trainer_venv("trl", requirements=TRL, envduels=True, packages=(package,))
    backend = "bwrap" if "bwrap" in available_backends() else available_backends()[0]
    done = subprocess.run([str(venv / "bin" / "python"), str(CHECK), name], capture_output=True,
                          text=True, timeout=1200, cwd=tmp_path,
                          env=venv_environment(ENVDUELS_SANDBOX=backend,
                                               TRL_EXPERIMENTAL_SILENCE="1"))
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, (done.returncode, done.stderr[-4000:])
    result = json.loads(lines[0].removeprefix("RESULT "))
    assert result["tools"] == ["act"] and result["reward_names"] == ["EnvDuelsTRLEnv"]
    assert result["steps"] == 1 and result["rows"] == 4  # two designs × two seeds
    assert result["first"].startswith("Say the number ")
    assert (result["wrong"], result["before"]) == ("no, say it again", 0.0)
    assert (result["right"], result["reward"]) == ("yes", 1.0)
    assert result["after"].startswith("The episode is over")
