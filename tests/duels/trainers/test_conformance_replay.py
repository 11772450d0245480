"""Conformance replay: the stored trajectories of a real duel between built-in players, replayed
action by action through every trainer adapter EnvDuels writes, give the observations, rewards
and success the duel recorded, step for step.

Adapters: the Gymnasium package's env, the envduels-v1 class, the OpenEnv server's websocket
session (its ASGI app, driven in-process), the TRL package's class (its `act` tool answers the
observation; its reward is the episode's success), and the verifiers taskset run by `vf-eval` in
its cached virtualenv, the loopback model answering each turn with the reply the duel's solver
gave (format errors included); its trace's info holds what the environment answered.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import call_command

from duels.models import Duel, Episode, Status
from duels.selectors.training_sets import TrainingItem
from duels.services.players import player_seed_builtin
from duels.trainers.envduels_v1 import envduels_v1_write
from duels.trainers.openenv_server import EnvServer
from duels.trainers.rl_packages import rl_package_write
from duels.trainers.served_designs import served_designs_from_export
from sandbox_runner import available_backends
from tests.duels.trainers.test_envduels_v1 import load_class
from tests.duels.trainers.test_rl_verifiers import VERIFIERS
from tests.duels.trainers.trainer_venvs import trainer_venv, uv_binary, venv_environment
from tests.helpers.model_server import ModelServer
from tests.helpers.parts import need

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@dataclass
class Recorded:
    """One stored episode: its design, seed, reset text and the steps that reached the env."""

    design: str
    seed: int
    reset: str
    steps: list[tuple[str, str, float, bool, bool]]  # action, observation, reward, done, success
    success: bool
    hinted: bool
    replies: list[str]  # every reply the solver gave, format errors included
    transcript: list[tuple[str, float, bool, bool]]  # every turn's answer, reminders included


def recorded_episodes(duel: Duel) -> list[Recorded]:
    episodes = []
    for episode in (Episode.objects.filter(duel=duel, status=Status.FINISHED)
                    .select_related("environment").order_by("pk")):
        rows = list(episode.trajectory.order_by("index"))
        steps = [(s.action, s.observation, float(s.reward or 0.0), s.done, s.success)
                 for s in rows[1:] if not s.format_error]
        episodes.append(Recorded(
            design=episode.environment.content_hash, seed=episode.seed,
            reset=rows[0].observation, steps=steps, success=episode.success,
            hinted=episode.hint_id is not None, replies=[s.reply for s in rows[1:]],
            transcript=[(s.observation, float(s.reward or 0.0), s.done, s.success)
                        for s in rows[1:]]))
    return episodes


def training_item(environment) -> TrainingItem:
    return TrainingItem(design=environment.content_hash, environment=str(environment.uuid),
                        title=environment.title, author=environment.author.name,
                        family=environment.family, source=environment.source,
                        content_hash=environment.content_hash,
                        max_steps=environment.max_steps, hint=None,
                        cluster=environment.content_hash, training={"environments": []})


def import_package(root: Path, monkeypatch):
    module = next(p.name for p in root.iterdir() if p.is_dir())
    monkeypatch.syspath_prepend(str(root))
    return importlib.import_module(module)


def replay_gymnasium(package, episode: Recorded) -> tuple[str, list]:
    design_id = next(d["id"] for d in package.designs.designs() if d["design"] == episode.design)
    env = package.EnvDuelsEnv(design_id=design_id)
    _, info = env.reset(seed=episode.seed)
    steps = []
    for action, *_ in episode.steps:
        _, reward, terminated, _, step_info = env.step(action)
        steps.append((action, step_info["observation"], reward, terminated,
                      step_info["success"]))
    env.close()
    return info["observation"], steps


def replay_envduels_v1(classes: dict, episode: Recorded) -> tuple[str, list]:
    env = classes[episode.design](max_turns=None)
    first, _ = env.reset(seed=episode.seed)
    steps = []
    for action, *_ in episode.steps:
        observation, _, terminated, _, info = env.step(action)
        steps.append((action, observation, info["env_reward"], terminated, info["success"]))
    return first, steps


def replay_openenv(app: EnvServer, episode: Recorded) -> tuple[str, list]:
    async def session():
        client = WebsocketCommunicator(app, "/ws")
        connected, _ = await client.connect()
        assert connected
        await client.send_json_to({"type": "reset", "data": {"design": episode.design,
                                                             "seed": episode.seed}})
        first = await client.receive_json_from(timeout=60)
        steps = []
        for action, *_ in episode.steps:
            await client.send_json_to({"type": "step", "data": {"action": action}})
            reply = (await client.receive_json_from(timeout=60))["data"]
            # OpenEnv has one `done`; a cap that ends the episode is told in the metadata.
            terminated = reply["done"] and not reply["metadata"]["truncated"]
            steps.append((action, reply["observation"]["text"], reply["reward"], terminated,
                          reply["observation"]["success"]))
        await client.disconnect()
        return first["data"]["observation"]["text"], steps

    return async_to_sync(session)()


def replay_trl(package, episode: Recorded) -> tuple[str, list, float]:
    env = package.EnvDuelsTRLEnv()
    design_id = next(d["id"] for d in package.designs.designs() if d["design"] == episode.design)
    first = env.reset(design_id=design_id, seed=episode.seed)
    observations = [env.act(action) for action, *_ in episode.steps]
    return first, observations, env.get_reward()


def replay_verifiers(items: list[TrainingItem], episodes: list[Recorded], tmp_path: Path,
                     backend: str) -> dict[tuple[str, int], tuple[list, float]]:
    """Each unhinted (design, seed) played by vf-eval with the duel solver's replies; returns
    (the environment's answers, the success reward) per (design, seed)."""
    name = f"conform_vf_{os.getpid()}"
    package = rl_package_write(items=items, package_format="verifiers", out=tmp_path / "vf",
                               name=name)
    venv = trainer_venv("verifiers", requirements=VERIFIERS, envduels=True,
                        packages=(package,))
    # The model sees the conversation, not the seed: the recorded episode whose observations
    # so far are this conversation's gives the next reply (seeds with one reset text diverge
    # later, and the built-in solver answers one history one way).
    unhinted = [e for e in episodes if not e.hinted]

    def replay(messages: list[dict]) -> str:
        seen = [m["content"] for m in messages if m["role"] == "user"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        for episode in unhinted:
            answers = [observation for observation, *_ in episode.transcript[:len(seen) - 1]]
            if [episode.reset, *answers] == seen and turn < len(episode.replies):
                return episode.replies[turn]
        return "ACTION: (no recorded episode has this history)"

    out = tmp_path / "vf-out"
    with ModelServer(policy=replay) as server:
        done = subprocess.run(
            [str(venv / "bin" / "vf-eval"), name, "-m", "replay", "--no-push", "-o", str(out),
             "--client.base-url", server.base_url, "--client.api-key-var", "LOOPBACK_KEY",
             "--env.taskset.seeds", str(max(e.seed for e in episodes) + 1),
             "--env.taskset.backend", backend],
            capture_output=True, text=True, timeout=900, cwd=tmp_path,
            env=venv_environment(LOOPBACK_KEY="loopback", ENVDUELS_SANDBOX=backend,
                                 PATH=f"{venv / 'bin'}:{os.environ['PATH']}"))
    traces = list(out.glob("*/traces.jsonl"))
    assert done.returncode == 0 and len(traces) == 1, done.stderr[-3000:]
    designs = {d["id"]: d["design"] for d in json.loads(
        (package / name / "designs.json").read_text())["designs"]}
    played = {}
    for line in traces[0].read_text().splitlines():
        record = json.loads(line)
        (trace,) = record["traces"]
        info = record["task"]["data"]["info"]
        answers = [(s["observation"], s["reward"], s["done"], s["success"])
                   for s in trace["info"]["steps"]]
        played[(designs[info["design"]], info["seed"])] = (
            answers, trace["rewards"]["success"]["score"])
    return played


def test_every_adapter_replays_the_duel_step_for_step(tmp_path, settings, monkeypatch):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = backend = "bwrap" if "bwrap" in backends else backends[0]
    player_seed_builtin()
    call_command("duel", "builtin-architect", "builtin-rookie", "--attempts", "2",
                 "--json", stdout=sys.stderr, stderr=sys.stderr)
    duel = Duel.objects.select_related("env_a__author", "env_b__author").get()
    environments = [env for env in (duel.env_a, duel.env_b) if env is not None and env.is_valid]
    episodes = recorded_episodes(duel)
    assert environments and len(episodes) >= 4
    assert any(e.success for e in episodes) and any(len(e.steps) >= 2 for e in episodes)
    items = [training_item(env) for env in environments]
    gym = import_package(rl_package_write(items=items, package_format="gymnasium",
                                          out=tmp_path / "gym", name="conform_gym"),
                         monkeypatch)
    trl = import_package(rl_package_write(items=items, package_format="trl",
                                          out=tmp_path / "trl", name="conform_trl"),
                         monkeypatch)
    export = envduels_v1_write(items=items, out=tmp_path / "v1")
    rows = json.loads((export / "manifest.json").read_text())["environments"]
    classes = {row["design"]: load_class(export, row) for row in rows}
    app = EnvServer(designs=served_designs_from_export(root=export), backend=backend,
                    max_sessions=4)
    replayed = 0
    for episode in episodes:
        recorded = episode.steps
        for name, (first, steps) in (("gymnasium", replay_gymnasium(gym, episode)),
                                     ("envduels-v1", replay_envduels_v1(classes, episode)),
                                     ("openenv", replay_openenv(app, episode))):
            assert first == episode.reset, name
            assert steps == recorded, name
        first, observations, reward = replay_trl(trl, episode)
        assert first == episode.reset
        assert observations == [observation for _, observation, *_ in recorded]
        assert reward == (1.0 if episode.success else 0.0)
        replayed += 1
    assert replayed == len(episodes)
    need(uv_binary() is not None, "uv is not installed")
    played = replay_verifiers(items, episodes, tmp_path, backend)
    unhinted = [e for e in episodes if not e.hinted]
    assert set(played) == {(e.design, e.seed) for e in unhinted}
    for episode in unhinted:
        assert played[(episode.design, episode.seed)] == (
            episode.transcript, 1.0 if episode.success else 0.0)
    app.executor.shutdown(wait=True)
