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
    """The cached virtualenv with `package` (and its declared dependencies) installed."""
    key = hashlib.sha256((ROOT / "uv.lock").read_bytes()
                         + " ".join(DEPENDENCIES["verifiers"]).encode()
                         + sys.version.encode()).hexdigest()[:16]
    root = _cache_root()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"verifiers-{key}"
    with open(root / f"verifiers-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process builds or installs at a time
        if not (venv / "ready").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
        # The package and EnvDuels itself (what "envduels" in its dependencies names); the
        # first install resolves every declared dependency from the package index.
        subprocess.run([uv, "pip", "install", "-q", "-p", str(venv / "bin" / "python"),
                        "--reinstall-package", "envduels", "--refresh-package", "envduels",
                        str(package), str(ROOT)],
                       check=True, capture_output=True, timeout=1200)
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
    environment = {**os.environ, "PYTHONPATH": "", "DJANGO_SETTINGS_MODULE": ""}
    for solves, expected in ((True, 1.0), (False, 0.0)):
        with ModelServer(policy=_policy(solves)) as server:
            done = subprocess.run(
                [str(venv / "bin" / "python"), str(SCRIPT), name, server.base_url, "0"],
                capture_output=True, text=True, timeout=600, env=environment)
        line = next((text for text in done.stdout.splitlines() if text.startswith("ROLLOUTS ")),
                    None)
        assert line, f"no rollouts; exit {done.returncode}\n{done.stderr[-3000:]}"
        rollouts = json.loads(line.removeprefix("ROLLOUTS "))
        assert len(rollouts) == 4  # two designs × two seeds
        assert [row["reward"] for row in rollouts] == [expected] * 4, rollouts
        assert all(not row["error"] for row in rollouts), rollouts
        assert server.requests >= 4
