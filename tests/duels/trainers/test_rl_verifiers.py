"""The verifiers package, installed into its own virtualenv with the current verifiers release
(the `verifiers.v1` stack), resolves as a taskset by its package name and scores rollouts
played against a loopback model server: a solving policy 1.0 on every task, a failing one 0.0.

`vf-eval` (verifiers' own command) loads the taskset, runs each task through its chat harness
and our env, and writes one trace a task; the rewards are read from those traces.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from duels.trainers.rl_packages import DEPENDENCIES
from sandbox_runner import available_backends
from tests.duels.trainers.rl_sets import make_rl_set
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.duels.trainers.trainer_venvs import trainer_venv, uv_binary, venv_environment
from tests.helpers.model_server import ModelServer
from tests.helpers.parts import need

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

VERIFIERS = [[requirement.strip('"') for requirement in DEPENDENCIES["verifiers"]]]


def _policy(solves: bool):
    def answer(messages: list[dict]) -> str:
        said = re.findall(r"Say the number (\d+)", " ".join(
            str(m.get("content")) for m in messages if m.get("role") == "user"))
        if solves and said:
            return f"The task says {said[-1]}.\nACTION: {said[-1]}"
        return "I will guess.\nACTION: not a number"
    return answer


def _rewards(venv: Path, module: str, server: ModelServer, out: Path, backend: str) -> dict:
    """Run `vf-eval` on the taskset against `server`; return each task's success reward."""
    done = subprocess.run(
        [str(venv / "bin" / "vf-eval"), module, "-m", "policy", "--no-push", "-o", str(out),
         "--client.base-url", server.base_url, "--client.api-key-var", "LOOPBACK_KEY",
         "--env.taskset.seeds", "2", "--env.taskset.backend", backend],
        capture_output=True, text=True, timeout=900, cwd=out.parent,
        env=venv_environment(LOOPBACK_KEY="loopback", ENVDUELS_SANDBOX=backend,
                             PATH=f"{venv / 'bin'}:{os.environ['PATH']}"))
    traces = list(out.glob("*/traces.jsonl"))
    assert done.returncode == 0 and len(traces) == 1, (done.returncode, done.stdout[-3000:],
                                                        done.stderr[-3000:])
    rewards = {}
    for line in traces[0].read_text().splitlines():
        record = json.loads(line)
        (trace,) = record["traces"]
        assert not record["errors"] and trace["ok"], trace["errors"]
        rewards[record["task"]["data"]["name"]] = trace["rewards"]["success"]["score"]
    return rewards


@pytest.mark.timeout(3000)
def test_the_taskset_loads_with_current_verifiers_and_scores_1_for_solving_0_for_failing(
        make, tmp_path):
    need(sandbox_works(), "no sandbox backend works here")
    need(uv_binary() is not None, "uv is not installed")
    make_rl_set(make)
    package = tmp_path / "pkg"
    name = f"envduels_vf_{os.getpid()}"
    call_command("export", "--format", "verifiers", "--out", str(package), "--name", name)
    venv = trainer_venv("verifiers", requirements=VERIFIERS, envduels=True,
                        packages=(package,))
    backend = "bwrap" if "bwrap" in available_backends() else available_backends()[0]
    with (ModelServer(policy=_policy(True)) as solving,
          ModelServer(policy=_policy(False)) as failing):
        solved = _rewards(venv, name, solving, tmp_path / "solving", backend)
        failed = _rewards(venv, name, failing, tmp_path / "failing", backend)
    designs = json.loads((package / name / "designs.json").read_text())["designs"]
    tasks = {f"{design['id']}#{seed}" for design in designs for seed in (0, 1)}
    assert solved == dict.fromkeys(tasks, 1.0)
    assert failed == dict.fromkeys(tasks, 0.0)
    assert solving.requests >= 4 and failing.requests >= 4 * 4  # 4 turns each: max_steps
