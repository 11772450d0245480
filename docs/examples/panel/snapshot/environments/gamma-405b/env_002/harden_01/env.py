import re


class Game6:
    """Say the secret number; the harness boxes every action."""

    def __init__(self, max_turns=8):
        self.max_turns = max_turns
        self.turns = 0
        self.secret = None

    def reset(self, seed=None):
        self.turns = 0
        self.secret = (seed or 0) % 3 + 7
        return ("Find the number from 7 to 9 (arithmetic). Answer with \\boxed{n}.",
                {"seed": seed})

    def step(self, action):
        self.turns += 1
        found = re.findall(r"\\boxed\{([^{}]*)\}", action)
        guess = found[-1].strip() if found else ""
        if guess == str(self.secret):
            return "correct", 1.0, True, False, {}
        hint = "higher" if guess.isdigit() and int(guess) < self.secret else "lower"
        return hint, 0.0, False, self.turns >= self.max_turns, {}
