"""Validation plays an environment as a solver would: the actions its reset text announces and
common probes, the same game twice in one sandbox and once in a fresh one."""

from __future__ import annotations

import pytest

from duels.engine.validation import environment_validation_report
from duels.engine.validation_probes import MAX_ANNOUNCED, announced_actions, solver_actions
from sandbox_runner import SandboxLimits, open_sandbox
from tests.sandbox_runner.conftest import first_working_backend

MIB = 1024 * 1024
LIMITS = SandboxLimits(memory_bytes=64 * MIB, call_timeout=2.0, episode_timeout=20.0)
pytestmark = pytest.mark.timeout(120)
HINT = "Dig three times before you sell."


@pytest.fixture(scope="module")
def backend() -> str:
    return first_working_backend()


@pytest.mark.parametrize(("text", "actions"), [
    ("Steer the boat. Actions: 'ahead', 'wait'.", ["ahead", "wait"]),
    ("Type `guess <number>` or `move <direction>`; don't panic, it's easy.",
     ["guess 1", "move north"]),
    ('Say "open [door]" to open one.', ["open 1"]),
    ("You are in a hall.\nExits: north, south or east.", ["north", "south", "east"]),
    ("- Commands: look | take X | go {dir}", ["look", "take 1", "go north"]),
    ("Nothing to see here, it's quiet.", []),
])
def test_the_action_forms_a_reset_text_announces_are_read_and_filled(text, actions):
    assert announced_actions([text]) == actions


def test_the_solver_script_is_junk_then_probes_then_announced_forms_without_repeats():
    actions = solver_actions(["Actions: 'look', 'dig'.", "Actions: 'dig', 'help'."])
    assert actions[-5:] == ["help", "hint", "look", "?", "dig"]
    assert actions.count("look") == 1 and actions.count("help") == 1
    many = "Actions: " + ", ".join(f"'a{n}'" for n in range(40))
    assert len(announced_actions([many])) == MAX_ANNOUNCED


def test_commands_announced_anywhere_are_played_bullet_lists_included():
    reset = ("The clock tower. Commands:\n- look: see the room\n- wind the key\n"
             "* listen (hear the owl)\n1. open hatch - open it\n2. `press lever`\n\n"
             "Or try one of these commands: north, south or climb.\n"
             "- a bullet under no heading is prose")
    assert announced_actions([reset]) == [
        "press lever", "north", "south", "climb", "look", "wind the key", "listen",
        "open hatch"]


RANDOM_IN_STEP = '''
import random


class Environment:
    max_steps = 10

    def reset(self, seed):
        self.dug = 0
        return "Dig for gold. Actions: 'dig', 'sell'."

    def step(self, action):
        if action == "dig":
            self.dug += 1
            return {"observation": "You find %d nuggets." % random.randint(1, 10**6),
                    "done": False, "success": False}
        return {"observation": "Nothing happens.", "done": action == "sell",
                "success": self.dug > 2}
'''


def dig(sandbox, seed: int) -> list[str]:
    return [sandbox.reset(seed=seed), *(sandbox.step("dig").observation for _ in range(3))]


def test_a_module_level_random_draw_in_step_is_pinned_and_proven_so(backend):
    """Issue acceptance: an unseeded module-level `random` call in step, no reference solution
    and junk never reaching it, is no longer admitted as it is: the sandbox seeds that
    generator from the episode's seed, and validation plays the announced `dig` to prove it."""
    report = environment_validation_report(source=RANDOM_IN_STEP, hint_texts=[HINT],
                                           limits=LIMITS, backend=backend)
    assert report["valid"] is True, report
    assert announced_actions(["Dig for gold. Actions: 'dig', 'sell'."]) == ["dig", "sell"]
    assert "twice in one sandbox and in a fresh one" in next(
        check["detail"] for check in report["checks"] if check["name"] == "deterministic")
    assert report["warnings"][0].startswith("line 15: random.randint draws from the "
                                            "module-level random")
    with open_sandbox(RANDOM_IN_STEP, limits=LIMITS, backend=backend) as first:
        seed_0, seed_1, seed_0_again = dig(first, 0), dig(first, 1), dig(first, 0)
    with open_sandbox(RANDOM_IN_STEP, limits=LIMITS, backend=backend) as fresh:
        seed_0_fresh = dig(fresh, 0)
    assert seed_0 == seed_0_again == seed_0_fresh
    assert seed_0[1:] != seed_1[1:]  # the draws are live and follow the seed


def test_entropy_only_a_well_formed_action_reaches_is_refused_at_that_action(backend):
    source = RANDOM_IN_STEP.replace("random.randint(1, 10**6)",
                                    'int.from_bytes(__import__("os").urandom(4), "big")')
    report = environment_validation_report(source=source, hint_texts=[HINT], limits=LIMITS,
                                           backend=backend)
    failed = {check["name"]: check["detail"] for check in report["checks"] if not check["passed"]}
    assert list(failed) == ["deterministic"]
    assert "(action 'dig'): observation 'You find " in failed["deterministic"]


def test_state_that_outlives_reset_unseen_by_the_source_check_is_caught_in_one_sandbox(backend):
    source = RANDOM_IN_STEP.replace(
        'self.dug += 1', 'setattr(Environment, "total", getattr(Environment, "total", 0) + 1)\n'
        '            self.dug += 1').replace(
        '"You find %d nuggets." % random.randint(1, 10**6)', '"Dug %d times." % Environment.total')
    report = environment_validation_report(source=source, hint_texts=[HINT], limits=LIMITS,
                                           backend=backend)
    failed = {check["name"]: check["detail"] for check in report["checks"] if not check["passed"]}
    assert list(failed) == ["deterministic"]
    assert "the first time" in failed["deterministic"]
    assert "the second time in the same sandbox" in failed["deterministic"]


def test_a_hint_printed_by_a_probe_is_a_leak(backend):
    source = RANDOM_IN_STEP.replace('return {"observation": "Nothing happens."',
                                    'if action == "hint":\n'
                                    '            return {"observation": "Sell after three digs.",'
                                    ' "done": False, "success": False}\n'
                                    '        return {"observation": "Nothing happens."')
    report = environment_validation_report(source=source, hint_texts=["sell after THREE digs"],
                                           limits=LIMITS, backend=backend)
    failed = {check["name"]: check["detail"] for check in report["checks"] if not check["passed"]}
    assert list(failed) == ["hint_not_leaked"]
    assert "(action 'hint')" in failed["hint_not_leaked"]


def test_the_solver_script_stops_at_max_steps_as_an_episode_does(backend):
    """An environment may rely on never being asked for more than max_steps actions."""
    source = '''
class Environment:
    max_steps = 2

    def reset(self, seed):
        self.turn = 0
        return "Two turns. Actions: 'wait'."

    def step(self, action):
        self.turn += 1
        if self.turn > self.max_steps:
            raise RuntimeError("asked for a step past max_steps")
        return {"observation": "turn %d" % self.turn, "done": False, "success": False}
'''
    report = environment_validation_report(source=source, hint_texts=[HINT], limits=LIMITS,
                                           backend=backend)
    assert report["valid"] is True, report


def test_a_source_full_of_clock_reads_gets_a_short_report(backend):
    reads = "".join(f"        stamp_{n} = time.time()\n" for n in range(30))
    source = RANDOM_IN_STEP.replace("import random", "import random\nimport time").replace(
        "        self.dug = 0\n", "        self.dug = 0\n" + reads)
    report = environment_validation_report(source=source, hint_texts=[HINT], limits=LIMITS,
                                           backend=backend)
    detail = next(check["detail"] for check in report["checks"] if check["name"] == "deterministic")
    assert detail.startswith("line 11: time.time() reads the clock")
    assert detail.count("reads the clock") == 5 and "; and 25 more such line(s)" in detail
