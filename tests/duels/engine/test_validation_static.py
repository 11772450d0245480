"""The static half of the determinism check: what is refused with its line, what only warned,
and what is left alone (read on the host; nothing runs)."""

from __future__ import annotations

import random
import textwrap

import pytest

from duels.engine.validation_static import determinism_findings
from duels.players.scripted import FAMILIES


def findings(body: str) -> tuple[list[str], list[str]]:
    return determinism_findings(textwrap.dedent(body))


@pytest.mark.parametrize(("source", "refusal"), [
    ("from time import time as now\nx = now()\n", "line 2: time.time() reads the clock"),
    ("import datetime as dt\nx = dt.datetime.now()\n",
     "line 2: datetime.datetime.now() reads the clock"),
    ("from datetime import date\nx = date.today()\n", "line 2: datetime.date.today() reads"),
    ("import time\nx = time.strftime('%H')\n", "line 2: time.strftime() reads the clock"),
    ("from os import urandom\nx = urandom(4)\n", "line 2: os.urandom() draws from the system's"),
    ("import secrets\nx = secrets.token_hex(4)\n", "line 2: secrets.token_hex() draws"),
    ("import uuid\nx = uuid.uuid1()\n", "line 2: uuid.uuid1() draws from the system's entropy"),
    ("import random\nr = random.SystemRandom()\n", "line 2: random.SystemRandom() draws"),
    ("import random\nrandom.seed()\n", "line 2: random.seed() without a seed"),
    ("import random\nr = random.Random(None)\n", "line 2: random.Random() without a seed"),
    ("x = id(object())\n", "line 1: id() is a memory address"),
    ("import os\nx = os.getppid()\n", "line 2: os.getppid() is the sandbox's process number"),
])
def test_sources_the_sandbox_cannot_pin_are_refused_with_their_line(source, refusal):
    refusals, _warnings = determinism_findings(source)
    assert len(refusals) == 1 and refusals[0].startswith(refusal), refusals


def test_formatting_a_given_time_and_deterministic_uuids_are_left_alone():
    refusals, warnings = findings("""
        import time, uuid
        a = time.strftime("%H:%M", time.gmtime(3600))
        b = time.localtime(0)
        c = uuid.uuid5(uuid.NAMESPACE_DNS, "envduels")
        time.sleep(0)
    """)
    assert (refusals, warnings) == ([], [])


def test_a_local_name_id_or_hash_is_not_the_builtin():
    refusals, warnings = findings("""
        def lookup(id, table):
            return table[id]

        def hash(text):
            return len(text)

        x = hash("a")
    """)
    assert (refusals, warnings) == ([], [])


CLASS_STATE = """
    import random

    class Environment:
        max_steps = 5
        DECK = ["a", "b", "c"]
        count = 0
        seen = {}

        def reset(self, seed):
            %s
            return "ready"

        def step(self, action):
            %s
            return {"observation": "", "done": False, "success": False}
"""


@pytest.mark.parametrize(("in_reset", "in_step", "refusal"), [
    ("random.Random(seed).shuffle(self.DECK)", "pass",
     "line 11: reset() changes self.DECK, a container made once on the class (line 6)"),
    ("pass", "Environment.count += 1", "line 15: step() changes Environment.count, which is "
     "kept on the class, so it outlives reset; keep it on the instance: self.count = ..."),
    ("pass", "type(self).count = 3", "line 15: step() changes Environment.count"),
    ("pass", "self.seen[action] = 1", "line 15: step() changes self.seen"),
])
def test_state_kept_on_the_class_and_changed_is_refused(in_reset, in_step, refusal):
    refusals, _warnings = findings(CLASS_STATE % (in_reset, in_step))
    assert len(refusals) == 1 and refusals[0].startswith(refusal), refusals


@pytest.mark.parametrize(("in_reset", "in_step"), [
    ("self.seen = {}", "self.seen[action] = 1"),  # rebound on the instance first
    ("self.deck = list(self.DECK)", "random.Random(1).shuffle(self.deck)"),
    ("pass", "self.count += 1"),  # an int: += binds an instance attribute
    ("pass", "x = self.DECK[0]"),  # read only
])
def test_class_constants_and_instance_state_are_left_alone(in_reset, in_step):
    assert findings(CLASS_STATE % (in_reset, in_step)) == ([], [])


def test_the_module_level_random_is_a_warning_unless_reset_seeds_it():
    unseeded = """
        import random
        class Environment:
            def reset(self, seed):
                return "x"
            def step(self, action):
                return {"observation": str(random.randint(1, 6)), "done": False,
                        "success": False}
    """
    refusals, warnings = findings(unseeded)
    assert refusals == []
    assert warnings == ["line 7: random.randint draws from the module-level random, which "
                        "EnvDuels seeds from the episode's seed before each reset; elsewhere "
                        "it is unseeded: use rng = random.Random(seed) in reset"]
    seeded = unseeded.replace('return "x"', 'random.seed(seed)\n                return "x"')
    assert findings(seeded) == ([], [])
    fixed = unseeded.replace('return "x"', 'random.seed(7)\n                return "x"')
    assert findings(fixed)[1][0] == ("line 5: random.seed(7) ignores the episode's seed, so "
                                     "every seed is the same puzzle; use random.seed(seed)")


def test_a_module_that_does_not_parse_has_no_findings():
    assert determinism_findings("class Environment(:\n") == ([], [])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_builtin_environments_are_never_refused_or_warned(family):
    for difficulty in (1, 2, 3, 4, 5):
        env = FAMILIES[family].generate(difficulty=difficulty,
                                        rng=random.Random(f"{family}:{difficulty}:0"))
        assert determinism_findings(env.source) == ([], []), (family, difficulty)
