"""`manage.py serve_envs`, played by the real `openenv` package's GenericEnvClient (in its own
cached virtualenv): a design played to success, 16 concurrent sessions each in its own fresh
sandbox, a refused 17th, a hostile design that cannot reach the server, an idle session closed.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from duels.analytics.designs import content_hash
from duels.selectors.training_sets import TrainingItem
from duels.trainers.envduels_v1 import envduels_v1_write
from sandbox_runner import available_backends
from tests.duels.trainers.rl_sets import SOURCE
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.duels.trainers.trainer_venvs import trainer_venv, uv_binary, venv_environment
from tests.helpers.parts import need

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
CLIENT = Path(__file__).with_name("openenv_client.py")
OPENENV = [["openenv>=0.10,<0.11"]]
SESSIONS = 16
IDLE_SECONDS = 3

COUNTER = '''
class Environment:
    max_steps = 3
    resets = 0  # class-level: a reused sandbox would count past 1

    def reset(self, seed):
        Environment.resets += 1
        self.seed = seed
        return "reset number " + str(Environment.resets) + " for seed " + str(seed)

    def step(self, action):
        done = action == "stop"
        return {"observation": action + " at " + str(self.seed), "done": done,
                "success": done, "reward": 1.0 if done else 0.0}
'''

HOSTILE = '''
import socket


class Environment:
    max_steps = 2

    def reset(self, seed):
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
            return "reached the server"
        except Exception as error:
            return "blocked: " + type(error).__name__

    def step(self, action):
        return {{"observation": "over", "done": True, "success": False}}
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def item(source: str, title: str) -> TrainingItem:
    design = content_hash(source)
    return TrainingItem(design=design, environment=str(uuid.uuid4()), title=title, author="tester",
                        family="test", source=source, content_hash=design, max_steps=None,
                        hint=None, cluster=design, training={"environments": []})


def start_server(export: Path, port: int, backend: str) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve_envs", "--port", str(port), "--from",
         str(export), "--backend", backend, "--max-sessions", str(SESSIONS),
         # One client plays every session here: its own share is the whole server.
         "--max-sessions-per-client", str(SESSIONS), "--resets-per-minute", "1000",
         "--idle-timeout", str(IDLE_SECONDS)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    line = server.stdout.readline()  # "serving N designs on http://..." once it listens
    assert line.startswith("serving 3 designs on "), (line, server.stderr.read()[-3000:]
                                                       if server.poll() is not None else "")
    return server


@pytest.mark.timeout(1800)
def test_generic_env_client_plays_sessions_each_in_its_own_sandbox(tmp_path):
    need(sandbox_works(), "no sandbox backend works here")
    need(uv_binary() is not None, "uv is not installed")
    backend = "bwrap" if "bwrap" in available_backends() else available_backends()[0]
    port = free_port()
    say, counter = SOURCE.format(modulus=3), COUNTER
    hostile = HOSTILE.format(port=port)
    export = envduels_v1_write(items=[item(say, "Say the number"), item(counter, "Counter"),
                                      item(hostile, "Hostile")], out=tmp_path / "export")
    venv = trainer_venv("openenv", requirements=OPENENV)
    server = start_server(export, port, backend)
    try:
        started = time.monotonic()
        done = subprocess.run(
            [str(venv / "bin" / "python"), str(CLIENT), f"http://127.0.0.1:{port}",
             content_hash(say), content_hash(counter), content_hash(hostile), str(SESSIONS),
             str(IDLE_SECONDS)],
            capture_output=True, text=True, timeout=900, env=venv_environment())
        elapsed = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, (done.returncode, done.stderr[-3000:])
    result = json.loads(lines[0].removeprefix("RESULT "))
    play = result["play"]
    assert play["first"]["text"] == "Say the number 1." and play["first"]["seed"] == 7
    assert play["wrong"] == [{"text": "no, say it again", "design": content_hash(say),
                              "seed": 7, "step": 1, "success": False}, 0.0, False]
    assert play["right"][1:] == [1.0, True] and play["right"][0]["success"] is True
    assert play["state"]["step_count"] == 2 and play["state"]["success"] is True
    # No design and no seed: the first design and a random seed, both reported back.
    assert play["default"][0] == content_hash(say) and isinstance(play["default"][1], int)
    concurrent = result["concurrent"]
    assert concurrent["open_sessions"] == SESSIONS
    # Every reset of every session ran in a fresh sandbox: the class-level count is 1 in each.
    assert all(text.startswith("reset number 1 for seed ") for text in concurrent["texts"])
    assert len(set(concurrent["sandboxes"])) == 2 * SESSIONS
    assert "CAPACITY_REACHED" in concurrent["refused"]
    assert concurrent["finished"] == [[1.0, True, True]] * SESSIONS
    assert result["hostile"] != "reached the server"
    assert result["hostile"].startswith(("blocked: ", "error: ")), result["hostile"]
    assert result["idle"].startswith("closed: "), result["idle"]
    assert result["after"]["sessions"] == 0
    sys.stderr.write(f"openenv client run: {elapsed:.1f} s; 2x{SESSIONS} concurrent resets "
                     f"{concurrent['seconds']:.2f} s\n")
