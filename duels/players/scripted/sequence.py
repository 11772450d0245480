"""Hidden-rule sequence: predict the next number three times in a row.

The real difficulty is that the steps between numbers repeat in a cycle longer than the few numbers
shown; the hint spells out the cycle, so the solver can predict from the very first question.
"""

from __future__ import annotations

import random
import re

from duels.players.scripted.common import (
    GeneratedEnvironment,
    SolverView,
    clamp_difficulty,
    family_environment,
)

NAME = "sequence"
LABEL = "Hidden-rule sequence"

TEMPLATE = '''
"""Hidden-rule sequence: say the next number; three right answers in a row win."""
import random
import re

PARAMS = __PARAMS__


class Environment:
    max_steps = PARAMS["max_steps"]

    def _start(self, seed):
        rng = random.Random("sequence:%s:%s" % (PARAMS["salt"], seed))
        return rng.randint(1, 60), rng.randrange(len(PARAMS["cycle"]))

    def _grow(self):
        cycle = PARAMS["cycle"]
        step = cycle[(self.phase + len(self.terms) - 1) % len(cycle)]
        self.terms.append(self.terms[-1] + step)

    def reset(self, seed):
        start, self.phase = self._start(seed)
        self.terms = [start]
        for _ in range(PARAMS["shown"] - 1):
            self._grow()
        self.streak = 0
        return (
            "Hidden-rule sequence.\\n"
            "The numbers below follow a fixed hidden rule. Say the next number with "
            "`next <number>`. After each answer the true next number is revealed. "
            "Answer right %d times in a row to win. You have %d answers.\\n"
            "Sequence: %s" % (PARAMS["streak"], self.max_steps, ", ".join(map(str, self.terms)))
        )

    def step(self, action):
        match = re.search(r"next\\s+(-?\\d+)", str(action))
        if not match:
            return {"observation": "Say `next` followed by a whole number.",
                    "done": False, "success": False, "reward": 0.0}
        guess = int(match.group(1))
        self._grow()
        truth = self.terms[-1]
        if guess == truth:
            self.streak += 1
            verdict = "Right, it was %d." % truth
        else:
            self.streak = 0
            verdict = "Wrong, it was %d." % truth
        won = self.streak >= PARAMS["streak"]
        text = "%s Streak: %d/%d.\\nSequence: %s" % (
            verdict, self.streak, PARAMS["streak"], ", ".join(map(str, self.terms)))
        return {"observation": text + ("\\nYou win!" if won else ""),
                "done": won, "success": won, "reward": 1.0 if won else 0.0}

    def reference_solution(self, seed):
        start, phase = self._start(seed)
        cycle, terms = PARAMS["cycle"], [start]
        for i in range(PARAMS["shown"] + PARAMS["streak"] - 1):
            terms.append(terms[-1] + cycle[(phase + i) % len(cycle)])
        return ["next %d" % t for t in terms[PARAMS["shown"]:]]
'''

# difficulty -> (cycle length, numbers shown, step budget, cycle has repeated values)
LEVELS = {
    1: (1, 3, 6, False),
    2: (2, 3, 6, False),
    3: (4, 3, 4, False),
    4: (5, 3, 3, False),
    5: (6, 2, 3, True),
}


def _cycle(length: int, repeats: bool, rng: random.Random) -> list[int]:
    values = rng.sample([v for v in range(-9, 13) if v != 0], length)
    if repeats:
        # Two values recur, so a short window of steps no longer pins the place in the cycle.
        values[2], values[5] = values[0], values[1]
    return values


def generate(*, difficulty: int, rng: random.Random) -> GeneratedEnvironment:
    level = clamp_difficulty(difficulty)
    length, shown, budget, repeats = LEVELS[level]
    cycle = _cycle(length, repeats, rng)
    params = {
        "cycle": cycle,
        "shown": shown,
        "streak": 3,
        "max_steps": budget,
        "salt": rng.randrange(10**6),
    }
    steps = ", ".join(f"{v:+d}" for v in cycle)
    if length == 1:
        hint = (
            f"The steps between numbers repeat in a fixed cycle: {steps} "
            "(every step is the same)."
        )
    else:
        hint = (
            f"The steps between numbers repeat in a fixed cycle: {steps} "
            "(then the cycle starts again)."
        )
    return family_environment(
        label=LABEL, family=NAME, level=level, template=TEMPLATE, params=params,
        hint=hint,
    )


def recognises(task: str) -> bool:
    return task.startswith("Hidden-rule sequence.")


_SEQUENCE = re.compile(r"Sequence: ([-\d, ]+)")
_HINT = re.compile(r"repeat in a fixed cycle: ([-+\d, ]+)")


def hinted_cycle(hint: str | None) -> list[int] | None:
    """Return the cycle of steps from a hint like '... fixed cycle: +3, -2 (then ...)'."""
    match = _HINT.search(hint or "")
    return [int(v) for v in re.findall(r"[-+]?\d+", match.group(1))] if match else None


def _predict_with_cycle(diffs: list[int], cycle: list[int]) -> int | None:
    for phase in range(len(cycle)):
        if all(cycle[(phase + i) % len(cycle)] == d for i, d in enumerate(diffs)):
            return cycle[(phase + len(diffs)) % len(cycle)]
    return None


def act(view: SolverView) -> tuple[str, str]:
    """Return (reasoning, action) for this skill."""
    matches = _SEQUENCE.findall(view.latest) or _SEQUENCE.findall(view.task)
    terms = [int(v) for v in re.findall(r"-?\d+", matches[-1])] if matches else [0]
    diffs = [b - a for a, b in zip(terms, terms[1:], strict=False)]
    last = terms[-1]
    if view.skill == "random" or not diffs:
        return "A guess near the last number.", f"next {last + view.rng.randint(-10, 10)}"
    cycle = hinted_cycle(view.hint)
    if view.skill == "greedy":
        # Greedy looks only at the latest step: the hinted cycle's step after its first
        # occurrence, which goes wrong when a cycle repeats a value.
        if cycle and diffs[-1] in cycle:
            step = cycle[(cycle.index(diffs[-1]) + 1) % len(cycle)]
            return "The hint's cycle after the latest step.", f"next {last + step}"
        return "The last step repeats.", f"next {last + diffs[-1]}"
    if cycle:
        step = _predict_with_cycle(diffs, cycle)
        if step is not None:
            return "Following the cycle from the hint.", f"next {last + step}"
    # Smallest period consistent with every step seen so far; the whole history if none shorter.
    for period in range(1, len(diffs) + 1):
        if all(diffs[i] == diffs[i + period] for i in range(len(diffs) - period)):
            step = diffs[len(diffs) - period]
            return f"The steps seem to repeat every {period}.", f"next {last + step}"
    return "No pattern yet.", f"next {last + diffs[-1]}"
