"""Secret cipher: decode a word whose letters were shifted through the alphabet.

The real difficulty is the key: a different shift for each letter in turn, too many to try within
the answers allowed. The hint states the shifts, so one answer suffices.
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

NAME = "cipher"
LABEL = "Secret cipher"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
WORDS = [
    "GARDENER", "LANTERNS", "HARBOURS", "MOUNTAIN", "PAINTERS", "SILVERED", "WHISTLES",
    "ORCHARDS", "TRAVELER", "MARIGOLD", "NOTEBOOK", "SANDSTONE", "FORESTRY", "CHAMPION",
    "BLANKETS", "QUARTERS", "MEADOWS", "TORTOISE", "KEYBOARD", "PLATFORM", "DOLPHINS",
]

TEMPLATE = '''
"""Secret cipher: decode the word; each answer shows which letters are in place."""
import random
import re

PARAMS = __PARAMS__
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Environment:
    max_steps = PARAMS["max_steps"]

    def _secret(self, seed):
        rng = random.Random("cipher:%s:%s" % (PARAMS["salt"], seed))
        word = rng.choice(PARAMS["words"])
        phase = rng.randrange(len(PARAMS["shifts"])) if PARAMS["random_phase"] else 0
        shifts = PARAMS["shifts"]
        cipher = "".join(ALPHABET[(ALPHABET.index(ch) + shifts[(phase + i) % len(shifts)]) % 26]
                         for i, ch in enumerate(word))
        return word, cipher

    def reset(self, seed):
        self.word, self.cipher = self._secret(seed)
        return (
            "Secret cipher.\\n"
            "A %d-letter English word was encrypted by shifting its letters through the "
            "alphabet. Decode it and say `answer <word>`. After each answer you see which "
            "letters are in place. You have %d answers.\\nCiphertext: %s"
            % (len(self.word), self.max_steps, self.cipher)
        )

    def step(self, action):
        match = re.search(r"answer\\s+([A-Za-z]+)", str(action))
        if not match or len(match.group(1)) != len(self.word):
            return {"observation": "Say `answer` and a %d-letter word." % len(self.word),
                    "done": False, "success": False, "reward": 0.0}
        guess = match.group(1).upper()
        if guess == self.word:
            return {"observation": "Correct, the word is %s!" % self.word, "done": True,
                    "success": True, "reward": 1.0}
        mask = "".join(g if g == w else "_" for g, w in zip(guess, self.word))
        return {"observation": "Answer %s: letters in place: %s\\nCiphertext: %s"
                % (guess, mask, self.cipher), "done": False, "success": False,
                "reward": mask.count("_") / len(mask)}

    def reference_solution(self, seed):
        return ["answer " + self._secret(seed)[0]]
'''

# difficulty -> (shifts in the key, range of each shift, answer budget, key phase varies by seed)
LEVELS = {
    1: (1, (1, 4), 6, False),
    2: (2, (3, 8), 10, False),
    3: (2, (14, 25), 5, False),
    4: (3, (10, 25), 3, False),
    5: (3, (10, 25), 1, True),
}


def generate(*, difficulty: int, rng: random.Random) -> GeneratedEnvironment:
    level = clamp_difficulty(difficulty)
    count, (low, high), budget, random_phase = LEVELS[level]
    shifts = rng.sample(range(low, high + 1), count)
    params = {
        "shifts": shifts,
        "words": WORDS,
        "max_steps": budget,
        "random_phase": random_phase,
        "salt": rng.randrange(10**6),
    }
    if count == 1:
        hint = f"Every letter is shifted forward in the alphabet by {shifts[0]}; shift it back."
    else:
        key = join_words([str(v) for v in shifts], "and")
        hint = (
            f"The letters are shifted forward in the alphabet by {key} in turn, repeating; "
            "shift each back."
        )
    return family_environment(
        label=LABEL, family=NAME, level=level, template=TEMPLATE, params=params,
        hint=hint,
    )


def recognises(task: str) -> bool:
    return task.startswith("Secret cipher.")


_CIPHER = re.compile(r"Ciphertext: ([A-Z]+)")
_ANSWER = re.compile(r"Answer ([A-Z]+): letters in place: ([A-Z_]+)")
_HINT = re.compile(r"shifted forward in the alphabet by ([\d, and]+)")
ENGLISH = "ETAOINSRHLDCUMFPGWYBVKXJQZ"


def hinted_shifts(hint: str | None) -> list[int] | None:
    """Return the key from a hint like '... shifted forward in the alphabet by 3 or 11 in turn'."""
    match = _HINT.search(hint or "")
    return [int(v) for v in re.findall(r"\d+", match.group(1))] if match else None


def _shift_back(text: str, shifts: list[int], phase: int = 0) -> str:
    return "".join(
        ALPHABET[(ALPHABET.index(ch) - shifts[(phase + i) % len(shifts)]) % 26]
        for i, ch in enumerate(text)
    )


def _english_score(word: str) -> int:
    return sum(len(ENGLISH) - ENGLISH.index(ch) for ch in word)


def act(view: SolverView) -> tuple[str, str]:
    """Return (reasoning, action) for this skill."""
    match = _CIPHER.search(view.task)
    cipher = match.group(1) if match else "A"
    answers = [(g, m) for obs in view.observations[1:] for g, m in _ANSWER.findall(obs)]
    tried = {g for g, _ in answers}
    if view.skill == "random":
        shift = view.rng.randint(1, 25)
        return f"Try a shift of {shift}.", f"answer {_shift_back(cipher, [shift])}"
    key = hinted_shifts(view.hint)
    if view.skill == "greedy":
        if key:
            # Greedy applies the key from the first letter on and never reconsiders the start.
            return "Decoding with the hint's key.", f"answer {_shift_back(cipher, key)}"
        candidates = sorted(
            (_shift_back(cipher, [s]) for s in range(1, 26)), key=_english_score, reverse=True
        )
        word = next((c for c in candidates if c not in tried), candidates[0])
        return "The most English-looking single shift.", f"answer {word}"
    if key:
        for phase in range(len(key)):
            word = _shift_back(cipher, key, phase)
            consistent = all(
                (w == g) == (m[i] != "_") for g, m in answers for i, w in enumerate(word)
            )
            if consistent and word not in tried:
                return "Decoding with the key from the hint.", f"answer {word}"
    return _scan(cipher, answers)


def _scan(cipher: str, answers: list[tuple[str, str]]) -> tuple[str, str]:
    """Try shifts 1, 2, 3, ... at every letter not yet in place, keeping the ones that fit."""
    letters = []
    for i, ch in enumerate(cipher):
        known = next((m[i] for _, m in answers if m[i] != "_"), None)
        if known:
            letters.append(known)
            continue
        wrong = {g[i] for g, _ in answers}
        shift = next(
            (s for s in range(1, 26) if _shift_back(ch, [s]) not in wrong), 0
        )
        letters.append(_shift_back(ch, [shift]))
    return "Trying the next shift on every unknown letter.", "answer " + "".join(letters)
