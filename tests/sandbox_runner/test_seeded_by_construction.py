"""What every sandbox makes deterministic by construction, on every backend: string hashing and
set order (PYTHONHASHSEED pinned although the guest starts under -I), the module-level random
(seeded from the episode's seed before each reset, whatever the module seeded it with), and a
fresh instance of the environment for each reset."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sandbox_runner import open_sandbox
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
