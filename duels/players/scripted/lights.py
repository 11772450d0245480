"""Lights out: switch off a row of lights where each press also flips hidden neighbours.

The real difficulty is the unknown flip pattern: a solver must spend presses discovering it and has
no presses to spare. The hint states the pattern, so the shortest solution can be computed at once.
"""

from __future__ import annotations

import itertools
import random
import re

from duels.players.scripted.common import (
    GeneratedEnvironment,
    SolverView,
    clamp_difficulty,
    family_environment,
    join_words,
)

NAME = "lights"
LABEL = "Lights out"

TEMPLATE = '''
"""Lights out: switch every light off; a press flips that light and some others."""
import itertools
import random
import re

PARAMS = __PARAMS__


class Environment:
    max_steps = PARAMS["max_steps"]

    def _flip(self, lights, index):
        n = len(lights)
        for offset in PARAMS["offsets"]:
            for target in {index - offset, index + offset}:
                if PARAMS["wrap"]:
                    target %= n
                if 0 <= target < n:
                    lights[target] ^= 1

    def _start(self, seed):
        rng = random.Random("lights:%s:%s" % (PARAMS["salt"], seed))
        while True:
            presses = rng.sample(range(PARAMS["size"]), PARAMS["presses"])
            lights = [0] * PARAMS["size"]
            for index in presses:
                self._flip(lights, index)
            if self._needs_all(lights, len(presses)):
                return lights, presses

    def _needs_all(self, lights, presses):
        """True when no fewer presses than the scramble used can switch everything off."""
        for count in range(presses):
            for combo in itertools.combinations(range(len(lights)), count):
                state = list(lights)
                for index in combo:
                    self._flip(state, index)
                if not any(state):
                    return False
        return True

    def _show(self):
        return "Lights: %s (%d on)" % ("".join(map(str, self.lights)), sum(self.lights))

    def reset(self, seed):
        self.lights, _ = self._start(seed)
        n = len(self.lights)
        return (
            "Lights out.\\n"
            "A row of %d lights, numbered 1 to %d from the left; 1 is on, 0 is off. "
            "Say `press <number>` to press a light; a press flips that light and maybe others. "
            "Switch every light off. You have %d presses.\\n%s"
            % (n, n, self.max_steps, self._show())
        )

    def step(self, action):
        match = re.search(r"press\\s+(\\d+)", str(action))
        n = len(self.lights)
        if not match or not 1 <= int(match.group(1)) <= n:
            return {"observation": "Say `press` and a light number from 1 to %d." % n,
                    "done": False, "success": False, "reward": 0.0}
        self._flip(self.lights, int(match.group(1)) - 1)
        if not any(self.lights):
            return {"observation": "All lights are off!", "done": True, "success": True,
                    "reward": 1.0}
        return {"observation": "Pressed %s. %s" % (match.group(1), self._show()),
                "done": False, "success": False, "reward": 1.0 - sum(self.lights) / n}

    def reference_solution(self, seed):
        return ["press %d" % (index + 1) for index in self._start(seed)[1]]
'''

# difficulty -> (lights, flip offsets besides the light itself, scramble presses, budget, wraps)
LEVELS = {
    1: (5, [], 2, 6, False),
    2: (6, [1], 2, 6, False),
    3: (10, [2], 3, 3, False),
    4: (12, [1, 3], 3, 3, False),
    5: (12, [2, 3], 4, 4, False),
}
OFFSET_CHOICES = {3: [[2], [3], [1, 2]], 4: [[1, 3], [2, 3], [1, 4]], 5: [[2, 3], [1, 4], [2, 5]]}


def generate(*, difficulty: int, rng: random.Random) -> GeneratedEnvironment:
    level = clamp_difficulty(difficulty)
    size, offsets, presses, budget, wrap = LEVELS[level]
    if level in OFFSET_CHOICES:
        offsets = rng.choice(OFFSET_CHOICES[level])
    params = {
        "size": size,
        "offsets": [0, *offsets],
        "presses": presses,
        "max_steps": budget,
        "wrap": wrap,
        "salt": rng.randrange(10**6),
    }
    if offsets:
        places = join_words([str(v) for v in offsets], "and")
        unit = "place" if offsets == [1] else "places"
        hint = f"Pressing a light also flips the lights {places} {unit} to its left and right."
    else:
        hint = "Pressing a light flips only that light."
    return family_environment(
        label=LABEL, family=NAME, level=level, template=TEMPLATE, params=params,
        hint=hint,
    )


def recognises(task: str) -> bool:
    return task.startswith("Lights out.")


_LIGHTS = re.compile(r"Lights: ([01]+)")
_HINT_PLACES = re.compile(r"flips the lights ([\d, and]+) places?")


def hinted_offsets(hint: str | None) -> list[int] | None:
    """Return the flip offsets from a hint such as '... flips the lights 1 and 3 places ...'."""
    if not hint:
        return None
    if "flips only that light" in hint:
        return [0]
    match = _HINT_PLACES.search(hint)
    return [0, *(int(v) for v in re.findall(r"\d+", match.group(1)))] if match else None


def _flip(lights: list[int], index: int, offsets: list[int]) -> list[int]:
    result = list(lights)
    for offset in offsets:
        for target in {index - offset, index + offset}:
            if 0 <= target < len(result):
                result[target] ^= 1
    return result


def shortest_presses(lights: list[int], offsets: list[int]) -> list[int] | None:
    """Return the fewest light indices whose presses switch everything off, or None."""
    for count in range(0, len(lights) + 1):
        for combo in itertools.combinations(range(len(lights)), count):
            state = lights
            for index in combo:
                state = _flip(state, index, offsets)
            if not any(state):
                return list(combo)
    return None


def act(view: SolverView) -> tuple[str, str]:
    """Return (reasoning, action) for this skill."""
    boards = [[int(c) for c in m.group(1)] if (m := _LIGHTS.search(o)) else None
              for o in view.observations]
    lights = boards[-1] or next((b for b in reversed(boards) if b), [1])
    lit = [i for i, on in enumerate(lights) if on] or [0]
    if view.skill == "random":
        return "Press something.", f"press {view.rng.randrange(len(lights)) + 1}"
    offsets = hinted_offsets(view.hint)
    if view.skill == "greedy":
        if offsets:
            # One step ahead only: the press that leaves the fewest lights on.
            press = min(range(len(lights)), key=lambda i: sum(_flip(lights, i, offsets)))
            return "The press that switches off the most, by the hint.", f"press {press + 1}"
        return "Press a light that is on.", f"press {lit[0] + 1}"
    offsets = offsets or _learnt_offsets(view, boards)
    if offsets is None:
        return "First, learn what a press does.", "press 1"
    plan = shortest_presses(lights, offsets)
    if not plan:
        return "My model of the lights is off; press a lit one.", f"press {lit[0] + 1}"
    return f"Solving with flip offsets {offsets}.", f"press {plan[0] + 1}"


def _learnt_offsets(view: SolverView, boards: list) -> list[int] | None:
    """Infer the flip offsets from the lights that changed after each earlier press."""
    offsets: set[int] = set()
    for index, action in enumerate(view.actions):
        match = re.search(r"press (\d+)", action)
        before, after = boards[index], boards[index + 1]
        if not match or not before or not after:
            continue
        pressed = int(match.group(1)) - 1
        offsets |= {abs(i - pressed) for i in range(len(before)) if before[i] != after[i]}
    return sorted(offsets | {0}) if offsets else None
