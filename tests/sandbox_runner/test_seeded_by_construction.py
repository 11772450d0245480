"""What every sandbox makes deterministic by construction, on every backend: string hashing and
set order (PYTHONHASHSEED pinned although the guest starts under -I), the module-level random
(seeded from the episode's seed before each reset, whatever the module seeded it with), and a
fresh instance of the environment for each reset."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sandbox_runner import EnvCodeError, open_sandbox
from tests.sandbox_runner.conftest import TEST_LIMITS

pytestmark = pytest.mark.timeout(120)

# Everything here would differ between two interpreters without the guest's pinning and seeding.
WORDS = '"north", "south", "east", "west", "up", "down", "lantern", "key"'
SLOPPY_ENV = '''
import random, sys

random.seed(1234)  # ignored: the guest seeds the module-level random before each reset


class Environment:
    max_steps = 20

    def __init__(self):
        self.history = []  # never cleared by reset: a fresh instance per reset clears it

    def reset(self, seed):
        words = {WORDS}
        return "hash %d flags %d order %s draw %d" % (
            hash("lantern"), sys.flags.hash_randomization, ",".join(words),
            random.randint(0, 10**9))

    def step(self, action):
        import random as late  # the same generator, imported late
        self.history.append(action)
        return {"observation": "%s %.12f %d" % (action, late.random(), len(self.history)),
                "done": False, "success": False}
'''.replace("WORDS", WORDS)


def pinned_hash_and_order() -> str:
    """The reset text's start as an interpreter run with PYTHONHASHSEED=0 on the host writes it."""
    program = (f"words = {{{WORDS}}}\n"
               "print('hash %d flags 0 order %s draw ' % (hash('lantern'), ','.join(words)))")
    done = subprocess.run([sys.executable, "-S", "-c", program], capture_output=True, text=True,
                          env={"PYTHONHASHSEED": "0"}, check=True)
    return done.stdout.rstrip("\n")


def play(sandbox, seed: int) -> list[str]:
    return [sandbox.reset(seed=seed), *(sandbox.step(a).observation for a in ("look", "go"))]


def test_hashing_random_and_instance_state_are_pinned_on_every_backend(backend):
    with open_sandbox(SLOPPY_ENV, limits=TEST_LIMITS, backend=backend) as first:
        seed_3 = play(first, 3)
        seed_4 = play(first, 4)
        seed_3_again = play(first, 3)
    with open_sandbox(SLOPPY_ENV, limits=TEST_LIMITS, backend=backend) as fresh:
        seed_3_fresh = play(fresh, 3)

    assert seed_3 == seed_3_again == seed_3_fresh
    assert "flags 0" in seed_3[0]  # hash randomisation is off in the guest
    # The hash and the set order are those of PYTHONHASHSEED=0 on every backend (so identical
    # across backends, too).
    assert seed_3[0].startswith(pinned_hash_and_order())
    # The episode's seed, not the module's random.seed(1234), decides the draws.
    assert seed_3[0].split(" draw ")[1] != seed_4[0].split(" draw ")[1]
    assert seed_3[2].endswith(" 2")  # two actions since this reset, not four


@pytest.mark.parametrize("backend", ["quickest"], indirect=True)
def test_the_environment_sees_the_pinned_seed_and_nothing_else_new(backend):
    probe = '''
import os, sys
class Environment:
    max_steps = 1
    def reset(self, seed):
        return "%s|%s|%d|%d" % (os.environ.get("PYTHONHASHSEED"), sorted(os.environ),
                                sys.flags.no_user_site, sys.flags.safe_path)
    def step(self, action):
        return {"observation": "", "done": True, "success": False}
'''
    with open_sandbox(probe, limits=TEST_LIMITS, backend=backend) as sandbox:
        seed, names, no_user_site, safe_path = sandbox.reset(seed=0).split("|")
    assert seed == "0"
    assert set(eval(names)) <= {"PATH", "LANG", "PYTHONHASHSEED", "HOSTNAME", "HOME"}
    assert (no_user_site, safe_path) == ("1", "1")  # what -I gave, kept by the re-exec


IMPORT_TIME_DRAW = '''
import random

WORDS = random.sample(["amber", "basil", "cedar", "delta", "ember", "fjord"], 3)  # at import


class Environment:
    max_steps = 1

    def reset(self, seed):
        return " ".join(WORDS)

    def step(self, action):
        return {"observation": "", "done": True, "success": False}
'''


@pytest.mark.parametrize("backend", ["quickest"], indirect=True)
def test_draws_made_while_the_module_imports_are_the_same_in_every_sandbox(backend):
    """The module-level random is seeded before the module's own import runs."""
    texts = set()
    for _ in range(3):
        with open_sandbox(IMPORT_TIME_DRAW, limits=TEST_LIMITS, backend=backend) as sandbox:
            texts.add(sandbox.reset(seed=0))
    assert len(texts) == 1


CLOCKS_READ = '''
import datetime, time
from dataclasses import dataclass, field
from time import time as bound_early


@dataclass
class Stamp:
    at: float = field(default_factory=time.time)


class Environment:
    max_steps = 1

    def reset(self, seed, late=time.monotonic):
        return "|".join(str(value) for value in (
            int(time.time()), int(bound_early()), int(Stamp().at), int(late()),
            int(time.perf_counter()), int(datetime.datetime.now().timestamp()),
            datetime.date.today().toordinal(), time.strftime("%Y-%m-%d %H:%M"),
            repr(datetime.datetime(2020, 1, 2, 3, 4)), repr(object())))

    def step(self, action):
        return {"observation": "", "done": True, "success": False}
'''


@pytest.mark.parametrize("backend", ["quickest"], indirect=True)
def test_a_moved_clock_moves_every_clock_and_the_heap(backend):
    """The replay after play's sandbox: every clock the environment can reach, however it got
    hold of it, is moved by the offset; reprs of datetimes read as ever; addresses differ."""
    offset = ((3 * 24 + 7) * 60 + 13) * 60 + 17
    with open_sandbox(CLOCKS_READ, limits=TEST_LIMITS, backend=backend) as sandbox:
        plain = sandbox.reset(seed=0).split("|")
    with open_sandbox(CLOCKS_READ, limits=TEST_LIMITS, backend=backend,
                      clock_offset=offset) as sandbox:
        moved = sandbox.reset(seed=0).split("|")
    for index in range(6):  # time, bound early, default_factory, default argument, counters
        assert abs(int(moved[index]) - int(plain[index]) - offset) <= 5, (index, plain, moved)
    assert int(moved[6]) - int(plain[6]) in (3, 4)  # the date, days later
    assert moved[7] != plain[7]  # shown to the minute
    assert moved[8] == plain[8] == "datetime.datetime(2020, 1, 2, 3, 4)"
    assert moved[9] != plain[9] and moved[9].startswith("<object object at 0x")


ELAPSED = '''
import time
from time import monotonic as bound_early


class Environment:
    max_steps = 5

    def reset(self, seed):
        self.started = (time.time(), bound_early())
        return "reset"

    def step(self, action):
        return {"observation": "%d %d" % (time.time() - self.started[0],
                                          bound_early() - self.started[1]),
                "done": False, "success": False}
'''


@pytest.mark.parametrize("backend", ["quickest"], indirect=True)
def test_a_clock_stride_moves_the_clocks_on_at_every_step_of_that_episode(backend):
    """The replay's fresh pass: each step is `clock_stride` seconds after the one before,
    whatever the host's pace; the next reset without a stride leaves the clocks where they are."""
    with open_sandbox(ELAPSED, limits=TEST_LIMITS, backend=backend,
                      clock_offset=100) as sandbox:
        sandbox.reset(seed=0, clock_stride=3661)
        assert [sandbox.step("wait").observation for _ in range(3)] == [
            "3661 3661", "7322 7322", "10983 10983"]
        sandbox.reset(seed=0)
        assert sandbox.step("wait").observation == "0 0"
    with (open_sandbox(ELAPSED, limits=TEST_LIMITS, backend=backend) as sandbox,
          pytest.raises(EnvCodeError, match="clock_stride needs the clocks moved at load")):
        sandbox.reset(seed=0, clock_stride=60)
