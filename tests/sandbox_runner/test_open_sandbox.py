"""The Python API every caller uses: results, the contract, and limits outside hostile cases."""

from __future__ import annotations

import pytest

from sandbox_runner import (
    EnvCodeError,
    EnvCrashed,
    SandboxCrashed,
    SandboxTimeout,
    StepResult,
    open_sandbox,
)
from tests.sandbox_runner.conftest import ECHO_ENV, TEST_LIMITS, TIMEOUT_LIMITS

pytestmark = pytest.mark.timeout(60)

MAZE_ENV = '''
import random

class Environment:
    max_steps = 4

    def reset(self, seed):
        self.goal = random.Random(seed).choice(["north", "south"])
        print("goal is", self.goal)
        return "You are in a maze. Exits: north, south."

    def step(self, action):
        if action == self.goal:
            return {"observation": "You escaped!", "done": True, "success": True, "reward": 1}
        return {"observation": "A wall.", "done": False, "success": False}

    def reference_solution(self, seed):
        return [random.Random(seed).choice(["north", "south"])]
'''


def env_with_step(body: str, extra: str = "") -> str:
    return (f"class Environment:\n    max_steps = 3\n{extra}\n"
            "    def reset(self, seed):\n        return 'start'\n\n"
            f"    def step(self, action):\n        {body}\n")


def test_an_episode_runs_end_to_end(any_backend):
    with open_sandbox(MAZE_ENV, limits=TEST_LIMITS, backend=any_backend) as sandbox:
        assert sandbox.backend_name == any_backend
        assert sandbox.max_steps == 4
        assert sandbox.reset(seed=5).startswith("You are in a maze")
        actions = sandbox.reference_solution(5)
        assert actions in (["north"], ["south"])
        wrong = "south" if actions == ["north"] else "north"
        assert sandbox.step(wrong) == StepResult("A wall.", False, False, 0.0)
        assert sandbox.step(actions[0]) == StepResult("You escaped!", True, True, 1.0)
        assert f"goal is {actions[0]}" in sandbox.log


def test_reference_solution_is_none_without_one(any_backend):
    code = env_with_step('return {"observation": "x", "done": False, "success": False}')
    with open_sandbox(code, limits=TEST_LIMITS, backend=any_backend) as sandbox:
        assert sandbox.reference_solution(0) is None


def test_exception_in_step_is_env_code_error_with_the_line(any_backend):
    code = env_with_step("return 1 / 0")
    with open_sandbox(code, limits=TEST_LIMITS, backend=any_backend) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises(EnvCodeError, match="ZeroDivisionError") as raised:
            sandbox.step("go")
        assert "return 1 / 0" in str(raised.value)
        assert "envduels_guest" not in str(raised.value)
        # The guest survived the environment's exception: the sandbox still answers.
        assert sandbox.reset(seed=0) == "start"


@pytest.mark.parametrize("body, message", [
    ("return 'just text'", "must return a dict"),
    ("return {'observation': 'x', 'done': False}", "missing 'success'"),
    ("return {'observation': 3, 'done': False, 'success': False}", "observation must be a str"),
    ("return {'observation': 'x', 'done': 'yes', 'success': False}", "bools"),
    ("return {'observation': '\\udcff', 'done': False, 'success': False}", "Unicode"),
    ("return {'observation': 'x', 'done': False, 'success': False, 'reward': 'big'}", "reward"),
])
def test_results_that_break_the_contract(any_backend, body, message):
    with open_sandbox(env_with_step(body), limits=TEST_LIMITS, backend=any_backend) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises(EnvCodeError, match=message):
            sandbox.step("go")


@pytest.mark.parametrize("code, message", [
    ("def broken(:\n", "SyntaxError"),
    ("x = 1\n", "no class named Environment"),
    ("class Environment:\n    max_steps = 500\n", "max_steps"),
    ("class Environment:\n    max_steps = True\n", "max_steps"),
    ("import nonexistent_module_xyz\n", "ModuleNotFoundError"),
])
def test_modules_that_do_not_load(any_backend, code, message):
    with pytest.raises(EnvCodeError, match=message):
        open_sandbox(code, limits=TEST_LIMITS, backend=any_backend)


def test_infinite_loop_at_import_times_out_on_open(any_backend):
    with pytest.raises(SandboxTimeout):
        open_sandbox("while True:\n    pass\n", limits=TIMEOUT_LIMITS, backend=any_backend)


def test_exit_from_the_environment_is_its_crash_with_status(any_backend):
    code = env_with_step("import os; os._exit(7)")
    with open_sandbox(code, limits=TEST_LIMITS, backend=any_backend) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises(EnvCrashed, match="status 7"):
            sandbox.step("go")
        with pytest.raises(EnvCrashed):
            sandbox.step("again")


def test_every_open_gets_a_fresh_sandbox(any_backend):
    with open_sandbox(ECHO_ENV, limits=TEST_LIMITS, backend=any_backend) as first:
        first.reset(seed=0)
    with open_sandbox(ECHO_ENV, limits=TEST_LIMITS, backend=any_backend) as second:
        assert second.process is not first.process
        assert second.step("ping").observation == "pong"
    with pytest.raises(SandboxCrashed, match="closed"):
        first.step("ping")
