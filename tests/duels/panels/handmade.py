"""An envduels-v1 export and a result snapshot written by hand, as the original harness lays
them out (no EnvDuels code writes them): 3 authors x 2 environments, single and graded hints."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

AUTHORS = ("alpha-7b", "beta-70b", "gamma-405b")
DOMAINS = ("arithmetic", "words")
SEEDS = (11, 23, 37)

# A class as the original harness writes one: Cls(max_turns=), reset(seed=) -> (obs, info),
# step(action) -> 5-tuple, the action inside \boxed{}.
CLASS_TEMPLATE = '''import re


class {name}:
    """Say the secret number; the harness boxes every action."""

    def __init__(self, max_turns=8):
        self.max_turns = max_turns
        self.turns = 0
        self.secret = None

    def reset(self, seed=None):
        self.turns = 0
        self.secret = (seed or 0) % {modulus} + {offset}
        return ("Find the number from {offset} to {top} ({word}). Answer with \\\\boxed{{n}}.",
                {{"seed": seed}})

    def step(self, action):
        self.turns += 1
        found = re.findall(r"\\\\boxed\\{{([^{{}}]*)\\}}", action)
        guess = found[-1].strip() if found else ""
        if guess == str(self.secret):
            return "correct", 1.0, True, False, {{}}
        hint = "higher" if guess.isdigit() and int(guess) < self.secret else "lower"
        return hint, 0.0, False, self.turns >= self.max_turns, {{}}
'''

CLOCK_CLASS = '''import time


class Clocked:
    def __init__(self, max_turns=5):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.start = time.time()
        return "Say \\\\boxed{go} before the minute turns.", {}

    def step(self, action):
        late = int(time.time() - self.start) > 60
        return ("late" if late else "done"), 0.0 if late else 1.0, True, False, {}
'''


def class_text(number: int) -> str:
    modulus, offset = 3 + number % 3, 1 + number
    return CLASS_TEMPLATE.format(name=f"Game{number}", modulus=modulus, offset=offset,
                                 top=offset + modulus - 1, word=DOMAINS[number % 2])


def hints_of(number: int) -> dict[str, str]:
    if number % 2:
        return {"hint_1": f"Start in the middle of the range (game {number}).",
                "hint_2": f"The secret is the seed modulo {3 + number % 3}, shifted up."}
    return {"hint": f"Halve the range after every answer (game {number})."}


def env_id(number: int) -> str:
    author = AUTHORS[(number - 1) // 2]
    return f"environments/{author}/env_{(number - 1) % 2 + 1:03d}/harden_01"


def write_export(root: Path, *, extra_clock: bool = False) -> list[dict]:
    """Write the export at `root`; return its manifest rows."""
    rows = []
    numbers = list(range(1, 7)) + ([7] if extra_clock else [])
    for number in numbers:
        identifier = env_id(number) if number <= 6 else "environments/alpha-7b/env_003/harden_01"
        folder = root / identifier
        folder.mkdir(parents=True)
        code = (class_text(number) if number <= 6 else CLOCK_CLASS).encode()
        (folder / "env.py").write_bytes(code)
        (folder / "metadata.json").write_text(json.dumps(
            {"benchmark_seeds": list(SEEDS), "title": f"Game {number}"}))
        hints = hints_of(number)
        (folder / "privileged.json").write_text(json.dumps(
            {"environment_id": identifier, "hints": hints}))
        rows.append({
            "id": identifier, "author": AUTHORS[(number - 1) // 2] if number <= 6 else
            AUTHORS[0], "domain": DOMAINS[number % 2], "source": f"{identifier}/env.py",
            "source_sha256": hashlib.sha256(code).hexdigest(),
            "class_name": f"Game{number}" if number <= 6 else "Clocked", "max_turns": 6,
            "metadata": f"{identifier}/metadata.json",
            "privileged": f"{identifier}/privileged.json",
            "split": "test"})
    (root / "manifest.json").write_text(json.dumps({"format_version": 1,
                                                    "environments": rows}, indent=2))
    return rows


def outcome(model: int, number: int, seed: int, hinted: bool) -> str:
    """A fixed pattern of statuses: some models pass some versions, hints help some."""
    value = (model * 7 + number * 3 + seed + (5 if hinted else 0)) % 6
    if (model, number, seed, hinted) == (1, 2, SEEDS[0], False):
        return "error"  # an incomplete episode: never a result
    return "success" if value < (3 if hinted else 2) else "failure"


def write_snapshot(root: Path, export: Path) -> None:
    """The original's result snapshot for the export at `export`: every model played every
    version on every seed in both conditions (self plays included, as the original keeps)."""
    manifest = json.loads((export / "manifest.json").read_text())
    environments = []
    for number, row in enumerate(manifest["environments"][:6], start=1):
        path = row["id"].removesuffix("/harden_01")
        environments.append({"path": path, "designer": row["author"], "domain": row["domain"]})
        folder = root / row["id"]
        folder.mkdir(parents=True)
        (folder / "env.py").write_bytes((export / row["source"]).read_bytes())
        hints = json.loads((export / row["privileged"]).read_text())["hints"]
        episodes = [{"breaker": AUTHORS[model], "status": outcome(model, number, seed, hinted),
                     "episode": index, "seed": seed, "trial": 0,
                     "condition": "with_hint" if hinted else "without_hint"}
                    for model in range(3) for index, seed in enumerate(SEEDS)
                    for hinted in (False, True)]
        (folder / "run.json").write_text(json.dumps({
            "seeds": list(SEEDS), "hint": hints.get("hint", hints.get("hint_1")),
            "episodes": episodes}))
    (root / "run.json").write_text(json.dumps({
        "models": [{"name": name} for name in AUTHORS], "environments": environments}))
