"""`manage.py sandbox_run` and `manage.py build_sandbox_image`, as a person would run them."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from sandbox_runner.image.build import HASH_LABEL, debian_mirror
from tests.sandbox_runner.conftest import backend_available
from tests.sandbox_runner.test_open_sandbox import MAZE_ENV

PROJECT_DIR = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def maze_files(tmp_path):
    env_file = tmp_path / "maze.py"
    env_file.write_text(MAZE_ENV)
    actions = tmp_path / "actions.txt"
    actions.write_text("east\nnorth\nsouth\n")
    return env_file, actions


def test_sandbox_run_prints_the_transcript_as_json(any_backend, maze_files):
    env_file, actions = maze_files
    out = StringIO()
    call_command("sandbox_run", str(env_file), "--seed", "3", "--actions", str(actions),
                 "--backend", any_backend, "--json", stdout=out)
    transcript = json.loads(out.getvalue())
    assert transcript["backend"] == any_backend
    assert transcript["reset"].startswith("You are in a maze")
    assert transcript["error"] is None
    assert transcript["success"] is True
    assert transcript["steps"][-1]["observation"] == "You escaped!"
    assert transcript["steps"][0] == {"action": "east", "observation": "A wall.", "done": False,
                                      "success": False, "reward": 0.0}
    assert "goal is" in transcript["log"]
    statuses = {status["name"]: status for status in transcript["backend_status"]}
    assert list(statuses) == ["docker", "bwrap", "unshare"]
    assert statuses[any_backend]["available"] is True
    assert set(statuses[any_backend]) == {"name", "available", "limits_whole_sandbox", "reason"}


def test_sandbox_run_exits_non_zero_on_a_sandbox_error(any_backend, tmp_path):
    env_file = tmp_path / "loop.py"
    env_file.write_text("class Environment:\n    max_steps = 3\n    def reset(self, seed):\n"
                        "        while True:\n            pass\n")
    completed = subprocess.run(
        [sys.executable, "manage.py", "sandbox_run", str(env_file), "--seed", "0",
         "--backend", any_backend, "--call-timeout", "1", "--json"],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
    )
    assert completed.returncode != 0
    assert json.loads(completed.stdout)["error"]["type"] == "SandboxTimeout"


def test_sandbox_run_reports_an_unreadable_file():
    with pytest.raises(CommandError, match="cannot read"):
        call_command("sandbox_run", "/nonexistent/env.py", "--json")


def test_debian_mirror_is_read_from_apt_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n")
    assert debian_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text(
        "# comment\ndeb [arch=amd64] http://old.example/d bookworm main\n")
    assert debian_mirror(tmp_path) == "http://old.example/d"


def test_build_sandbox_image_skips_an_up_to_date_image(settings):
    backend_available("docker")
    for _build in range(2):  # the first run builds only when the guest changed since
        out = StringIO()
        call_command("build_sandbox_image", "--offline", "--tag",
                     settings.ENVDUELS_SANDBOX_IMAGE, stdout=out)
    assert "is up to date" in out.getvalue()
    import docker

    labels = docker.from_env().images.get(settings.ENVDUELS_SANDBOX_IMAGE).labels
    from sandbox_runner.guest import guest_hash

    assert labels[HASH_LABEL] == guest_hash()
