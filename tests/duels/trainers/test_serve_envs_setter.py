"""`manage.py serve_envs --role setter`, played by the real `openenv` package's GenericEnvClient
and by the setter taskset under the real `verifiers` release (each in its cached virtualenv)
against an installation of its own: the setter prompt a duel sends, a valid built-in answer
rewarded with the very setter score it earned in a duel with the same solver and seeds, an
unreadable answer 0 with the reason, a solver whose provider is down an error (never a reward).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from duels.players.prompts import DIGESTS_HEADER
from sandbox_runner import available_backends
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.duels.trainers.test_rl_verifiers import VERIFIERS
from tests.duels.trainers.test_serve_envs import OPENENV, free_port
from tests.duels.trainers.trainer_venvs import trainer_venv, uv_binary, venv_environment
from tests.helpers.installation import migrated_installation
from tests.helpers.model_server import ModelServer
from tests.helpers.parts import need

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
CLIENT = Path(__file__).with_name("openenv_setter_client.py")


class Installation:
    """An EnvDuels installation of its own (a var folder and its SQLite database)."""

    def __init__(self, var_dir: Path, backend: str) -> None:
        migrated_installation(var_dir)
        self.env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        self.env.update(ENVDUELS_VAR_DIR=str(var_dir), ENVDUELS_SANDBOX=backend,
                        ENVDUELS_BUILTIN_LATENCY_MS="0", LOOPBACK_KEY="loopback")
        self.backend = backend

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT,
                              env=self.env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
        return done.stdout

    def serve_setter(self, *, solvers: str, seeds: int) -> tuple[subprocess.Popen, str]:
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "serve_envs", "--role", "setter",
             "--solvers", solvers, "--seeds", str(seeds), "--port", str(port),
             "--backend", self.backend],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=self.env)
        line = server.stdout.readline()
        assert line.startswith("serving the setter's seat ("), (
            line, server.stderr.read()[-3000:] if server.poll() is not None else "")
        return server, f"http://127.0.0.1:{port}"


def setter_answer_of_a_duel(installation: Installation, tmp_path: Path) -> tuple[dict, dict]:
    """A duel of builtin-architect against builtin-ace on seeds 0 and 1: its JSON, and the
    setter-chat record of the architect's answer in it."""
    duel = json.loads(installation.manage("duel", "builtin-architect", "builtin-ace",
                                          "--attempts", "2", "--json"))
    out = tmp_path / "setter.jsonl"
    installation.manage("export", "--format", "setter-chat", "--player", "builtin-architect",
                        "--out", str(out))
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    return duel, record


def vf_eval(venv: Path, module: str, seat: str, model: ModelServer, out: Path) -> list[dict]:
    """`vf-eval` of the setter taskset against the seat at `seat`, the model served by `model`;
    each rollout's reward (or None) and errors."""
    done = subprocess.run(
        [str(venv / "bin" / "vf-eval"), module, "-m", "policy", "--no-push", "-o", str(out),
         "--client.base-url", model.base_url, "--client.api-key-var", "LOOPBACK_KEY",
         "--env.taskset.server", seat, "--env.taskset.rollouts", "2"],
        capture_output=True, text=True, timeout=900, cwd=out.parent,
        env=venv_environment(LOOPBACK_KEY="loopback",
                             PATH=f"{venv / 'bin'}:{os.environ['PATH']}"))
    traces = list(out.glob("*/traces.jsonl"))
    assert len(traces) == 1, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    rollouts = []
    for line in traces[0].read_text().splitlines():
        record = json.loads(line)
        (trace,) = record["traces"]
        rollouts.append({"reward": (trace["rewards"].get("setter_score") or {}).get("score"),
                         "ok": record["ok"] and trace["ok"],
                         "errors": json.dumps(record["errors"] + trace["errors"]),
                         "info": trace.get("info") or {}})
    return rollouts


@pytest.mark.timeout(2400)
def test_the_openenv_client_plays_the_setter_seat_rewarded_as_a_duel_scores(tmp_path):
    need(sandbox_works(), "no sandbox backend works here")
    need(uv_binary() is not None, "uv is not installed")
    backends = available_backends()
    installation = Installation(tmp_path / "var", "bwrap" if "bwrap" in backends
                                else backends[0])
    installation.manage("seed_builtin")
    duel, record = setter_answer_of_a_duel(installation, tmp_path)
    assert duel["a"]["valid"] and record["valid"]
    answer = tmp_path / "answer.txt"
    answer.write_text(record["answer"], encoding="utf-8")
    venv = trainer_venv("openenv", requirements=OPENENV)
    with ModelServer() as provider:
        provider.outage(after=0, count=10**6)  # every request: 503
        installation.manage(
            "shell", "-v", "0", "-c",
            "from duels.models import Player; Player.objects.create(name='down', "
            "provider='openai_compatible', model='m', base_url='" + provider.base_url + "', "
            "api_key_env='LOOPBACK_KEY', params={'max_retries': 0, 'actions': 'text'})")
        measuring, url = installation.serve_setter(solvers="builtin-ace", seeds=2)
        outage, outage_url = installation.serve_setter(solvers="builtin-ace,down", seeds=1)
        try:
            done = subprocess.run(
                [str(venv / "bin" / "python"), str(CLIENT), url, outage_url, str(answer),
                 duel["a"]["environment"]],
                capture_output=True, text=True, timeout=900, env=venv_environment())
            package = tmp_path / "taskset"
            module = f"envduels_setter_{os.getpid()}"
            installation.manage("export", "--format", "verifiers-setter", "--out", str(package),
                                "--name", module, "--server", url)
            vf_venv = trainer_venv("verifiers", requirements=VERIFIERS, envduels=True,
                                   packages=(package,))
            with (ModelServer(policy=lambda messages: record["answer"]) as writes_it,
                  ModelServer(policy=lambda messages: "Only prose, no module.") as rambles):
                taskset = {"valid": vf_eval(vf_venv, module, url, writes_it, tmp_path / "vf-1"),
                           "invalid": vf_eval(vf_venv, module, url, rambles, tmp_path / "vf-2"),
                           "outage": vf_eval(vf_venv, module, outage_url, writes_it,
                                             tmp_path / "vf-3")}
                prompts_seen = writes_it.requests
        finally:
            for server in (measuring, outage):
                server.terminate()
                server.wait(timeout=60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, (done.returncode, done.stderr[-3000:])
    result = json.loads(lines[0].removeprefix("RESULT "))

    valid = result["valid"]
    assert "error" not in valid, valid["error"]
    # The prompt is the one the architect was sent in its duel; the reward the score it earned.
    assert valid["prompt"]["prompt"] == record["messages"]
    assert valid["prompt"]["solvers"] == ["builtin-ace"] and valid["prompt"]["seeds"] == 2
    assert valid["done"] is True and valid["observation"]["valid"] is True
    assert valid["reward"] == duel["a"]["setter_score"] == record["setter_score"]
    assert (valid["observation"]["p_unhinted"], valid["observation"]["p_hinted"]) == (
        duel["a"]["p_unhinted"], duel["a"]["p_hinted"])
    assert valid["observation"]["design"] == record["design"]
    ace = valid["observation"]["solvers"]["builtin-ace"]
    assert ace["flips"] == duel["a"]["flips"] and len(ace["plays"]) == 4

    invalid = result["invalid"]
    assert invalid["reward"] == 0.0 and invalid["observation"]["valid"] is False
    assert invalid["observation"]["reason"].startswith("malformed answer: ")
    assert DIGESTS_HEADER in result["observe"]["text"] and result["observe"]["digests"] == 1

    failed = result["outage"]
    assert "reward" not in failed, failed
    assert "down could not play" in failed["error"] and "503" in failed["error"], failed
    assert provider.unavailable >= 1

    # The verifiers taskset gives the same rewards; an outage fails its rollouts, unrewarded.
    assert [r["reward"] for r in taskset["valid"]] == [valid["reward"]] * 2
    assert all(r["ok"] and r["info"]["valid"] is True for r in taskset["valid"])
    assert [r["reward"] for r in taskset["invalid"]] == [0.0] * 2
    assert all(r["info"]["reason"].startswith("malformed answer: ") for r in taskset["invalid"])
    assert taskset["outage"] and all(not r["ok"] and r["reward"] is None
                                     and "down could not play" in r["errors"]
                                     for r in taskset["outage"]), taskset["outage"]
    assert prompts_seen == 4
