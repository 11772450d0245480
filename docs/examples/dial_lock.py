"""A three-dial lock: find the code from "how many dials are right" feedback.

A complete environment that passes EnvDuels validation (see docs/environments.md). It uses only
the standard library, is deterministic in the seed, answers every action with a well-formed dict,
and proves it is solvable with reference_solution.
"""

import random


class Environment:
    max_steps = 30  # solver actions allowed per episode, 1..200

    def reset(self, seed: int) -> str:
        rng = random.Random(seed)  # all randomness from the seed: same seed, same episode
        self.code = [rng.randrange(10) for _ in range(3)]
        self.tries = 0
        return (
            "A lock has three dials, each showing a digit 0-9. Find the code.\n"
            "Actions: 'try D D D' (three digits, e.g. 'try 4 0 7').\n"
            "After each try you learn how many dials are already right."
        )

    def step(self, action: str) -> dict:
        words = action.strip().lower().split()
        if len(words) != 4 or words[0] != "try" or not all(w.isdigit() and len(w) == 1
                                                          for w in words[1:]):
            return {"observation": "Unknown action. Say 'try D D D', e.g. 'try 1 2 3'.",
                    "done": False, "success": False, "reward": 0.0}
        guess = [int(w) for w in words[1:]]
        self.tries += 1
        right = sum(guess[i] == self.code[i] for i in range(3))
        if right == 3:
            return {"observation": f"Click. The lock opens after {self.tries} tries.",
                    "done": True, "success": True, "reward": 1.0}
        return {"observation": f"{right} of 3 dials are right.", "done": False,
                "success": False, "reward": right / 3}

    def reference_solution(self, seed: int) -> list[str]:
        # Privileged: validation replays this to prove the environment can be solved.
        rng = random.Random(seed)
        code = [rng.randrange(10) for _ in range(3)]
        return ["try " + " ".join(str(digit) for digit in code)]
