"""Code vault: guess a digit code from "how many digits are right" feedback.

The real difficulty is that the code uses only a few digits; the hint names them, which turns a
scan over ten digits per position into one flip per position.
"""

from __future__ import annotations

import random
import re

from duels.players.scripted.common import (
    GeneratedEnvironment,
    SolverView,
    clamp_difficulty,
    family_environment,
    join_words,
)

NAME = "vault"
LABEL = "Code vault"

TEMPLATE = '''
"""Code vault: find the digit code; each try says how many digits are right and in place."""
import random
import re

PARAMS = __PARAMS__


class Environment:
    max_steps = PARAMS["max_steps"]

    def _code(self, seed):
        rng = random.Random("vault:%s:%s" % (PARAMS["salt"], seed))
        return "".join(rng.choice(PARAMS["digits"]) for _ in range(PARAMS["length"]))

    def reset(self, seed):
        self.code = self._code(seed)
        self.tries = 0
        n = PARAMS["length"]
        return (
            "Code vault.\\n"
            "A vault is locked by a %d-digit code (each digit 0-9).\\n"
            "Each try tells you how many digits are right and in the right place.\\n"
            "Say `enter <%d digits>`, for example `enter %s`. You have %d tries."
            % (n, n, "0" * n, self.max_steps)
        )

    def step(self, action):
        n = PARAMS["length"]
        match = re.search(r"enter\\s+(\\d+)", str(action))
        if not match or len(match.group(1)) != n:
            return {"observation": "Say `enter` followed by exactly %d digits." % n,
                    "done": False, "success": False, "reward": 0.0}
        guess = match.group(1)
        right = sum(1 for a, b in zip(guess, self.code) if a == b)
        if right == n:
            return {"observation": "enter %s: the vault opens!" % guess,
                    "done": True, "success": True, "reward": 1.0}
        return {"observation": "enter %s: %d of %d digits are right and in place."
                % (guess, right, n), "done": False, "success": False, "reward": right / n}

    def reference_solution(self, seed):
        return ["enter " + self._code(seed)]
'''

# difficulty -> (code length, number of digits used, step budget, digits drawn from)
LEVELS = {
    1: (2, 2, 24, "0123456789"),
    2: (3, 2, 30, "0123456789"),
    3: (4, 2, 8, "56789"),
    4: (6, 2, 9, "456789"),
    5: (6, 4, 11, "0123456789"),
}


def generate(*, difficulty: int, rng: random.Random) -> GeneratedEnvironment:
    level = clamp_difficulty(difficulty)
    length, used, budget, pool = LEVELS[level]
    digits = sorted(rng.sample(pool, used))
    params = {"length": length, "digits": digits, "max_steps": budget, "salt": rng.randrange(10**6)}
    if used == 2:
        hint = f"Every digit of the code is either {digits[0]} or {digits[1]}."
    else:
        hint = f"Every digit of the code is one of {join_words(digits)}."
    return family_environment(
        label=LABEL, family=NAME, level=level, template=TEMPLATE, params=params,
        hint=hint,
    )


def recognises(task: str) -> bool:
    return task.startswith("Code vault.")


_LENGTH = re.compile(r"locked by a (\d+)-digit code")
_FEEDBACK = re.compile(r"enter (\d+): (\d+) of \d+ digits")
_HINT = re.compile(r"digit of the code is (?:either|one of) ([\d ,or]+)")


def hinted_digits(hint: str | None) -> list[str] | None:
    """Return the digits a hint like 'Every digit of the code is either 3 or 7.' allows."""
    match = _HINT.search(hint or "")
    return re.findall(r"\d", match.group(1)) if match else None


def _tries(view: SolverView) -> list[tuple[str, int]]:
    return [(g, int(c)) for obs in view.observations[1:] for g, c in _FEEDBACK.findall(obs)]


def act(view: SolverView) -> tuple[str, str]:
    """Return (reasoning, action) for this skill."""
    match = _LENGTH.search(view.task)
    length = int(match.group(1)) if match else 4
    if view.skill == "random":
        code = "".join(view.rng.choice("0123456789") for _ in range(length))
        return "A random guess.", f"enter {code}"
    tries = _tries(view)
    digits = hinted_digits(view.hint) or list("0123456789")
    if view.skill == "greedy":
        return _greedy(view, tries, length, digits)
    return _scan(tries, length, digits)


def _greedy(
    view: SolverView, tries: list[tuple[str, int]], length: int, digits: list[str]
) -> tuple[str, str]:
    """Hill-climb: change one random digit of the best code so far; keep it if the count rises.

    With the hint it draws only the hinted digits, but still picks positions at random.
    """
    if not tries:
        return "Start anywhere.", "enter " + digits[0] * length
    best, _ = max(tries, key=lambda item: item[1])
    seen = {guess for guess, _ in tries}
    for _ in range(50):
        position = view.rng.randrange(length)
        candidate = best[:position] + view.rng.choice(digits) + best[position + 1 :]
        if candidate not in seen:
            return "Tweak one digit of my best code.", f"enter {candidate}"
    return "Tweak one digit of my best code.", f"enter {best}"


def _scan(tries: list[tuple[str, int]], length: int, digits: list[str]) -> tuple[str, str]:
    """Fix each position in turn by flipping it away from a baseline code of the first digit."""
    base = digits[0] * length
    if not tries or tries[0][0] != base:
        return "Baseline: all positions the same digit.", f"enter {base}"
    base_count = tries[0][1]
    known: dict[int, str] = {}
    ruled_out: dict[int, set[str]] = {i: set() for i in range(length)}
    for guess, count in tries[1:]:
        diff = [i for i in range(length) if guess[i] != base[i]]
        if len(diff) != 1:
            continue
        position, delta = diff[0], count - base_count
        if delta > 0:
            known[position] = guess[position]
        elif delta < 0:
            known[position] = base[position]
        else:
            ruled_out[position].update({guess[position], base[position]})
    for position in range(length):
        if position in known:
            continue
        left = [d for d in digits if d not in ruled_out[position]]
        if len(left) <= 1:
            known[position] = left[0] if left else base[position]
            continue
        flip = next(d for d in left if d != base[position])
        guess = base[:position] + flip + base[position + 1 :]
        return f"Test digit {flip} at position {position + 1}.", f"enter {guess}"
    code = "".join(known[i] for i in range(length))
    return "All positions are known.", f"enter {code}"
