"""The verifiers package, installed with its declared dependencies into its own virtualenv,
loads with `verifiers.load_environment` and scores rollouts against a loopback model server.

verifiers is heavy, so it never enters the project's environment: the virtualenv is built once
per lock (uv.lock and the package's dependencies) under ENVDUELS_TEST_CACHE (default
~/.cache/envduels-tests) and reused; each run installs the freshly exported package into it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from duels.exchange.rl_packages import DEPENDENCIES
from sandbox_runner import SandboxUnavailable, resolve_backend
from tests.duels.exchange.rl_sets import make_rl_set
from tests.helpers.model_server import ModelServer
from tests.helpers.parts import need

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).with_name("verifiers_rollout.py")


def _cache_root() -> Path:
    return Path(os.environ.get("ENVDUELS_TEST_CACHE")
                or Path.home() / ".cache" / "envduels-tests")


def _uv() -> str | None:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.exists() else shutil.which("uv")


def verifiers_venv(package: Path, uv: str) -> Path:
    """The cached virtualenv with `package` (and its declared dependencies) installed.

    The first install resolves every declared dependency from the package index. Later runs
    reuse that resolution: the key covers every dependency the package and EnvDuels declare, so
    the package and the current EnvDuels source go in without resolving again (no revalidation
    of each dependency against the index) and `uv pip check` proves every declared requirement
    is still met.
    """
    key = hashlib.sha256((ROOT / "uv.lock").read_bytes()
                         + " ".join(DEPENDENCIES["verifiers"]).encode()
                         + sys.version.encode()).hexdigest()[:16]
    root = _cache_root()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"verifiers-{key}"
    python = str(venv / "bin" / "python")
    with open(root / f"verifiers-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process builds or installs at a time
        ready = (venv / "ready").exists()
        if not ready:
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
        # The package and EnvDuels itself (what "envduels" in its dependencies names), rebuilt
        # from this checkout every run.
        reuse = ["--no-deps"] if ready else []
        subprocess.run([uv, "pip", "install", "-q", "-p", python, *reuse,
                        "--reinstall-package", "envduels", str(package), str(ROOT)],
                       check=True, capture_output=True, timeout=1200)
        subprocess.run([uv, "pip", "check", "-q", "-p", python],
                       check=True, capture_output=True, timeout=120)
        (venv / "ready").write_text("ok")
    return venv


def _policy(solves: bool):
    def answer(messages: list[dict]) -> str:
        last = messages[-1]["content"]
        match = re.search(r"Say the number (\d+)", " ".join(
            m["content"] for m in messages if m["role"] == "user"))
        if solves and match:
            return f"The task says {match.group(1)}.\nACTION: {match.group(1)}"
        return f"I read: {last[:40]}\nACTION: not a number"
    return answer


@pytest.mark.timeout(1500)
def test_exported_package_loads_and_scores_a_solving_policy_1_and_a_failing_one_0(make,
                                                                                 tmp_path):
    try:
        resolve_backend("auto")
        has_sandbox = True
    except SandboxUnavailable:
        has_sandbox = False
    need(has_sandbox, "no sandbox backend works here")
    uv = _uv()
    need(uv is not None, "uv is not installed")
    make_rl_set(make)
    package = tmp_path / "pkg"
    name = f"envduels_vf_{os.getpid()}"
    call_command("export", "--format", "verifiers", "--out", str(package), "--name", name)
    venv = verifiers_venv(package, uv)
    # Bytecode is written into the cached virtualenv (even where the caller's environment says
    # not to), so later runs import verifiers' thousands of modules compiled, not from source.
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTHONDONTWRITEBYTECODE"}
    environment.update(PYTHONPATH="", DJANGO_SETTINGS_MODULE="")
    with (ModelServer(policy=_policy(True)) as solving,
          ModelServer(policy=_policy(False)) as failing):
        done = subprocess.run(
            [str(venv / "bin" / "python"), str(SCRIPT), name, "0", solving.base_url,
             failing.base_url], capture_output=True, text=True, timeout=600, env=environment)
    lines = [text for text in done.stdout.splitlines() if text.startswith("ROLLOUTS ")]
    assert len(lines) == 2, (f"rollouts for {len(lines)} of 2 policies; exit {done.returncode}"
                             f"\n{done.stderr[-3000:]}")
    for line, server, expected in zip(lines, (solving, failing), (1.0, 0.0), strict=True):
        rollouts = json.loads(line.removeprefix("ROLLOUTS "))
        assert len(rollouts) == 4  # two designs × two seeds
        assert [row["reward"] for row in rollouts] == [expected] * 4, rollouts
        assert all(not row["error"] for row in rollouts), rollouts
        assert server.requests >= 4
