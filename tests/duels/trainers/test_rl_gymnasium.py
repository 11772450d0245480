"""The Gymnasium package of a curated set: every design passes check_env and plays to success."""

from __future__ import annotations

import importlib
import json
import sys

import pytest
from django.core.management import CommandError, call_command

from sandbox_runner import SandboxUnavailable, available_backends, resolve_backend
from tests.duels.trainers.rl_sets import make_rl_set
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db


def sandbox_works() -> bool:
    try:
        resolve_backend("auto")
    except SandboxUnavailable:
        return False
    return True


def test_export_writes_a_package_with_readme_designs_and_pyproject(make, tmp_path):
    environments = make_rl_set(make)
    out = tmp_path / "pkg"
    call_command("export", "--format", "gymnasium", "--out", str(out), "--name", "duel-gym")
    designs = json.loads((out / "duel_gym" / "designs.json").read_text())["designs"]
    assert [d["environment"] for d in designs] == [str(environments[1].uuid),
                                                   str(environments[0].uuid)]
    readme = (out / "README.md").read_text()
    for env in environments:
        assert env.content_hash in readme and env.author.name in readme
    assert 'dependencies = ["gymnasium>=1.0,<2"]' in (out / "pyproject.toml").read_text()
    # The package never carries code that runs the environment in-process.
    runtime = (out / "duel_gym" / "gymnasium_env.py").read_text()
    assert "exec(" not in runtime and "open_design" in runtime


def test_export_refuses_an_existing_directory_and_an_empty_set(make, tmp_path):
    with pytest.raises(CommandError, match="training set is empty"):
        call_command("export", "--format", "gymnasium", "--out", str(tmp_path / "none"))
    make_rl_set(make, count=1)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep")
    with pytest.raises(CommandError, match="not an empty directory"):
        call_command("export", "--format", "gymnasium", "--out", str(tmp_path / "full"))
    assert (tmp_path / "full" / "x").read_text() == "keep"


@pytest.fixture
def gym_package(make, tmp_path, monkeypatch, settings):
    # Every reset opens a fresh sandbox (check_env resets many times): the quickest to start.
    backends = available_backends()
    if backends:
        settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    make_rl_set(make)
    out = tmp_path / "pkg"
    call_command("export", "--format", "gymnasium", "--out", str(out), "--name",
                 f"gym_{tmp_path.name[-12:]}")
    module_name = next(p.name for p in out.iterdir() if p.is_dir())
    monkeypatch.syspath_prepend(str(out))
    yield importlib.import_module(module_name)
    for name in [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]:
        del sys.modules[name]


def test_every_design_passes_check_env_and_a_reference_solution_succeeds(gym_package):
    need(sandbox_works(), "no sandbox backend works here")
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    assert len(gym_package.ENV_IDS) == 2
    for env_id in gym_package.ENV_IDS:
        env = gym.make(env_id)
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=5)
        target = obs.removeprefix("Say the number ").removesuffix(".")
        obs, reward, terminated, truncated, info = env.step(target)
        assert (terminated, truncated, reward, info["success"]) == (True, False, 1.0, True)
        env.close()


def test_a_wrong_policy_is_truncated_after_max_steps(gym_package):
    need(sandbox_works(), "no sandbox backend works here")
    import gymnasium as gym

    env = gym.make(gym_package.ENV_IDS[0])
    env.reset(seed=1)
    for _ in range(4):
        obs, reward, terminated, truncated, info = env.step("wrong")
    assert (terminated, truncated, reward, info["success"]) == (False, True, 0.0, False)
    env.close()


def test_the_package_refuses_to_start_without_a_sandbox(gym_package, monkeypatch):
    import gymnasium as gym

    monkeypatch.setattr(sys.modules[gym_package.__name__ + ".designs"], "resolve_backend",
                        lambda backend: (_ for _ in ()).throw(SandboxUnavailable("none here")))
    with pytest.raises(SandboxUnavailable, match="none here"):
        gym.make(gym_package.ENV_IDS[0])
