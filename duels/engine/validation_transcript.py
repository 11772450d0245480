"""What validation plays in each sandbox, and what it reads from the transcripts.

The first sandbox resets seeds 0-2, plays as a solver would from reset(0) (junk, probes such as
`help`, and the action forms the reset text announces: validation_probes), replays the reference
solutions, then plays the same game from reset(0) once more in the same process. A second, fresh
sandbox plays the same script but that last repeat. Every answer is kept as an `Entry`, so
determinism is compared on observations, rewards, `done` and `success` at every step: the repeat
against the first play (the same process), the fresh sandbox against the first (a new one). The
hint is looked for in every text the environment returned. Near-miss method names are read from
the source on the host (parsed, never run).
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from typing import Any

from duels.engine.hint_search import hint_pieces
from duels.engine.validation_probes import solver_actions
from sandbox_runner import EnvCodeError

VALIDATION_SEEDS = (0, 1, 2)
REFERENCE_SEEDS = (0, 1)
COMPARED_FIELDS = ("observation", "reward", "done", "success", "actions")
SHOWN_CHARS = 60
# Names a setter may use instead of the contract's; a warning says which one was meant.
NEAR_MISSES = {
    "reference_solution": ("solve", "solution", "solutions", "reference", "reference_solutions",
                           "referencesolution", "get_reference_solution", "solve_seed"),
    "reset": ("Reset", "restart", "start", "begin"),
    "step": ("act", "Step", "action", "play", "move", "take_action"),
}
# CPython 3.11 keeps the AST constructor's recursion depth in state the threads share
# (python/cpython#106905): two threads parsing at once (both setters of a duel are validated in
# parallel) can fail with "SystemError: AST constructor recursion depth mismatch". One at a time.
_PARSE_LOCK = threading.Lock()

CLASS_NEAR_MISSES = ("Env", "environment", "Environments", "Game", "Puzzle", "Task")


@dataclass
class Entry:
    """One answer of the environment: a reset (step 0), a step, or a reference action list."""

    seed: int
    step: int
    what: str  # "reset", "action 'xyzzy'", "reference_solution"
    values: dict[str, Any] = field(default_factory=dict)

    def place(self) -> str:
        return f"seed {self.seed}, step {self.step} ({self.what})"


class Transcript:
    """Every answer of one sandbox, in order, with the seed and step it belongs to."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.entries: list[Entry] = []
        self.seed = 0
        self.step_number = 0
        # Where each part of the script starts in `entries`: "play", "reference", "repeat".
        self.marks: dict[str, int] = {}
        self.actions: list[str] = []

    def mark(self, part: str) -> None:
        self.marks[part] = len(self.entries)

    def part(self, start: str, end: str | None = None) -> list[Entry]:
        """The entries from mark `start` to mark `end` (or the end)."""
        return self.entries[self.marks[start]:self.marks[end] if end else None]

    def fresh_part(self) -> list[Entry]:
        """Every entry the fresh sandbox also has: all but the repeat."""
        return self.entries[:self.marks.get("repeat", len(self.entries))]

    def reset(self, sandbox, seed: int) -> str:
        text = sandbox.reset(seed=seed)
        self.seed, self.step_number = seed, 0
        self.entries.append(Entry(seed, 0, "reset", {"observation": text}))
        return text

    def step(self, sandbox, action: str):
        result = sandbox.step(action)
        self.step_number += 1
        shown = action if len(action) <= 20 else action[:20] + "…"
        self.entries.append(Entry(self.seed, self.step_number, f"action {shown!r}", {
            "observation": result.observation, "reward": result.reward, "done": result.done,
            "success": result.success}))
        return result

    def reference(self, sandbox, seed: int) -> list[str]:
        actions = sandbox.reference_solution(seed) or []
        self.entries.append(Entry(seed, 0, "reference_solution", {"actions": actions}))
        return actions

    def texts(self) -> list[tuple[Entry, str]]:
        return [(entry, entry.values["observation"]) for entry in self.entries
                if "observation" in entry.values]


def play_script(sandbox, transcript: Transcript, stage: dict[str, Any], *,
                repeat: bool) -> dict[str, Any]:
    """Play validation's script in `sandbox`, recording into `transcript`; `stage["check"]`
    names the check a failure belongs to, and `stage` keeps what the checks before it found
    (`resets`, `actions`, `replays`, `has_reference`), so a failure later on still reports them.
    With `repeat`, the solver's game is played twice."""
    stage["check"] = "three_seeds_reset"
    resets = {seed: transcript.reset(sandbox, seed) for seed in VALIDATION_SEEDS}
    stage["resets"] = resets
    stage["check"] = "junk_actions"
    transcript.actions = solver_actions(list(resets.values()))
    transcript.mark("play")
    play_solver_game(sandbox, transcript)
    stage["actions"] = transcript.actions
    stage["check"] = "reference_solution"
    transcript.mark("reference")
    replays = ([replay_reference(sandbox, transcript, seed) for seed in REFERENCE_SEEDS]
               if sandbox.has_reference else [])
    stage.update(replays=replays, has_reference=sandbox.has_reference)
    if repeat:
        stage["check"] = "deterministic"
        transcript.mark("repeat")
        play_solver_game(sandbox, transcript)
    stage["check"] = "done"
    return {"resets": resets, "replays": replays, "has_reference": sandbox.has_reference,
            "actions": transcript.actions}


def play_solver_game(sandbox, transcript: Transcript) -> None:
    """From reset(0), play the solver's actions; reset(0) again whenever the episode ends
    (done, or max_steps actions), as the engine would."""
    transcript.reset(sandbox, 0)
    taken = 0
    for action in transcript.actions:
        if taken == sandbox.max_steps:
            transcript.reset(sandbox, 0)
            taken = 0
        taken += 1
        if transcript.step(sandbox, action).done:
            transcript.reset(sandbox, 0)
            taken = 0


def replay_reference(sandbox, transcript: Transcript, seed: int) -> str:
    """Replay reference_solution(seed) from reset(seed); "" when it succeeds, else why not.

    An exception the environment raises here fails only the reference check (the guest is
    intact); any fault that stopped the sandbox propagates."""
    try:
        transcript.reset(sandbox, seed)
        actions = transcript.reference(sandbox, seed)
        if len(actions) > sandbox.max_steps:
            return f"seed {seed}: {len(actions)} actions exceed max_steps {sandbox.max_steps}"
        for number, action in enumerate(actions, start=1):
            result = transcript.step(sandbox, action)
            if result.done:
                return "" if result.success else (
                    f"seed {seed}: ended at action {number} without success")
    except EnvCodeError as error:
        if sandbox.failure is not None:
            raise
        return f"seed {seed}: the environment failed: {first_line(error)}"
    return f"seed {seed}: the replay never finished the episode"


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def shown(value: Any, start: int = 0) -> str:
    """A value as the report shows it; long text from `start`, cut to SHOWN_CHARS."""
    if not isinstance(value, str):
        return repr(value)[:SHOWN_CHARS]
    piece = value[start:start + SHOWN_CHARS]
    return ("…" if start else "") + repr(piece) + ("…" if start + SHOWN_CHARS < len(value) else "")


def difference(first: Entry, second: Entry, where: tuple[str, str]) -> str:
    """The first field in which two entries differ, said with both values; "" when equal."""
    for name in COMPARED_FIELDS:
        left, right = first.values.get(name), second.values.get(name)
        if left == right and type(left) is type(right):
            continue
        start = 0
        if isinstance(left, str) and isinstance(right, str):
            start = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b),
                         min(len(left), len(right)))
            start = max(0, start - 20)
        return (f"{first.place()}: {name} {shown(left, start)} {where[0]}, "
                f"{shown(right, start)} {where[1]}")
    return ""


def determinism_problem(first: list[Entry], second: list[Entry],
                        where: tuple[str, str] = ("in the first sandbox", "in the second")) -> str:
    """Why two runs of the same script differ (the first difference), or ""."""
    for left, right in zip(first, second, strict=False):
        if (left.seed, left.step, left.what) != (right.seed, right.step, right.what):
            return (f"{left.place()}: the other run was at {right.place()} instead; the "
                    "same seed and actions must give the same episode")
        problem = difference(left, right, where)
        if problem:
            return problem
    if len(first) != len(second):
        return (f"one run answered {len(first)} calls and the other {len(second)}; the same "
                "seed and actions must give the same episode")
    return ""


def same_sandbox_problem(transcript: Transcript) -> str:
    """Why the same seed and actions gave two episodes in one sandbox, or "": reset(0) at the
    start and again, and the solver's game played twice."""
    where = ("the first time", "the second time in the same sandbox")
    first_reset, again = transcript.entries[0], transcript.part("play")[0]
    return difference(first_reset, again, where) or determinism_problem(
        transcript.part("play", "reference"), transcript.part("repeat"), where)


def hint_leaks(transcripts: list[Transcript], hint_texts: list[str]) -> list[str]:
    """Where each hint shows (duels.engine.hint_search: the texts of one episode, from a reset
    to the next, read as one text, so a hint torn over several observations shows too)."""
    leaks = []
    for hint in hint_texts:
        places = next((found for transcript in transcripts
                       for episode in transcript_episodes(transcript)
                       if (found := _hint_places(hint, episode))), None)
        if places:
            kind = ("reset text" if places[0].what == "reset" else "observation")
            if len(places) == 1:
                leaks.append(f"the hint {shown(hint)} appears in the {kind} of "
                             f"{places[0].place()}")
            else:
                leaks.append(f"the hint {shown(hint)} appears torn over the texts of "
                             + " and ".join(place.place() for place in places))
    return leaks


def transcript_episodes(transcript: Transcript) -> list[list[Entry]]:
    """The transcript's texts cut into episodes: each from a reset up to the next one."""
    episodes: list[list[Entry]] = []
    for entry, _text in transcript.texts():
        if entry.what == "reset" or not episodes:
            episodes.append([])
        episodes[-1].append(entry)
    return episodes


def _hint_places(hint: str, episode: list[Entry]) -> list[Entry]:
    pieces = hint_pieces(hint=hint, texts=[entry.values["observation"] for entry in episode])
    return [episode[number] for number in sorted({piece.text for piece in pieces})]


def parse_source(source: str) -> ast.Module | None:
    """The module's syntax tree, or None when the host cannot parse it."""
    try:
        with _PARSE_LOCK:
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return None


def near_miss_warnings(source: str) -> list[str]:
    """Warnings for method and class names one slip away from the contract's, read statically."""
    tree = parse_source(source)
    if tree is None:
        return []  # warnings are advice: a module the host cannot parse gets none
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if "Environment" not in classes:
        return [f"the module defines class {name} but no class Environment; the class must be "
                "named exactly Environment" for name in CLASS_NEAR_MISSES if name in classes]
    methods = {node.name for node in classes["Environment"].body
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    warnings = []
    for expected, misses in NEAR_MISSES.items():
        if expected in methods:
            continue
        for name in misses:
            if name in methods:
                warnings.append(
                    f"Environment defines {name}() but no {expected}(); only {expected} is "
                    "called" + (", so solvability is not proven" if expected ==
                                "reference_solution" else ""))
    return warnings
