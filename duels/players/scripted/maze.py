"""Scrambled-compass maze: walk to the exit of a grid room whose compass words are swapped.

The real difficulty is the scrambled compass: a solver must spend steps learning which word moves
where. The hint gives the whole mapping, so the shortest walk fits the tight step budget.
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

NAME = "maze"
LABEL = "Scrambled-compass maze"
DIRECTIONS = ("north", "east", "south", "west")
DELTAS = {"north": (-1, 0), "east": (0, 1), "south": (1, 0), "west": (0, -1)}

TEMPLATE = '''
"""Scrambled-compass maze: reach the exit; the compass words may not mean what they say."""
import random
import re

PARAMS = __PARAMS__
DELTAS = {"north": (-1, 0), "east": (0, 1), "south": (1, 0), "west": (0, -1)}


class Environment:
    max_steps = PARAMS["max_steps"]

    def _layout(self, seed):
        rng = random.Random("maze:%s:%s" % (PARAMS["salt"], seed))
        last = PARAMS["size"] - 1
        goal = (rng.choice([0, last]), rng.choice([0, last]))
        start = (last - goal[0], last - goal[1])
        while True:
            cells = [(r, c) for r in range(last + 1) for c in range(last + 1)
                     if (r, c) not in (start, goal)]
            pillars = set(rng.sample(cells, PARAMS["pillars"]))
            path = self._walk(start, goal, pillars)
            if path is not None:
                return start, goal, pillars, path

    def _walk(self, here, goal, pillars):
        """A shortest walk (true directions) that avoids the pillars, or None."""
        if here == goal:
            return []
        for true in ("north", "east", "south", "west"):
            dr, dc = DELTAS[true]
            row, col = here[0] + dr, here[1] + dc
            closer = abs(goal[0] - row) + abs(goal[1] - col) < (
                abs(goal[0] - here[0]) + abs(goal[1] - here[1]))
            if closer and (row, col) not in pillars:
                rest = self._walk((row, col), goal, pillars)
                if rest is not None:
                    return [true] + rest
        return None

    def _where(self):
        return "You are at row %d, column %d. The exit is at row %d, column %d." % (
            self.pos + self.goal)

    def reset(self, seed):
        self.pos, self.goal, self.pillars, _ = self._layout(seed)
        size = PARAMS["size"]
        return (
            "Scrambled-compass maze.\\n"
            "You are in a %dx%d room (rows 0-%d top to bottom, columns 0-%d left to right). "
            "Walk to the exit with `go north`, `go east`, `go south` or `go west`. "
            "North is row - 1, east is column + 1. You have %d moves.\\n%s"
            % (size, size, size - 1, size - 1, self.max_steps, self._where())
        )

    def step(self, action):
        match = re.search(r"go\\s+(north|east|south|west)", str(action).lower())
        if not match:
            return {"observation": "Say `go` and a direction: north, east, south or west.",
                    "done": False, "success": False, "reward": 0.0}
        dr, dc = DELTAS[PARAMS["compass"][match.group(1)]]
        row, col = self.pos[0] + dr, self.pos[1] + dc
        size = PARAMS["size"]
        if not (0 <= row < size and 0 <= col < size):
            verdict = "You bump into the wall."
        elif (row, col) in self.pillars:
            verdict = "You bump into a pillar."
        else:
            self.pos = (row, col)
            verdict = "You walk one step."
        if self.pos == self.goal:
            return {"observation": verdict + " You reach the exit!", "done": True,
                    "success": True, "reward": 1.0}
        return {"observation": verdict + " " + self._where(), "done": False,
                "success": False, "reward": 0.0}

    def reference_solution(self, seed):
        word_for = {true: said for said, true in PARAMS["compass"].items()}
        return ["go " + word_for[true] for true in self._layout(seed)[3]]
'''

# difficulty -> (room size, compass kind, extra moves over the shortest walk, hidden pillars)
LEVELS = {
    1: (3, "honest", 6, 0),
    2: (4, "rotated", 3, 0),
    3: (5, "scrambled", 0, 0),
    4: (6, "scrambled", 0, 0),
    5: (6, "scrambled", 0, 4),
}


def _compass(kind: str, rng: random.Random) -> dict[str, str]:
    if kind == "honest":
        return {d: d for d in DIRECTIONS}
    if kind == "rotated":
        turn = rng.choice([1, 2, 3])
        return {d: DIRECTIONS[(i + turn) % 4] for i, d in enumerate(DIRECTIONS)}
    while True:
        order = rng.sample(DIRECTIONS, 4)
        # At least three words lie, so guessing one swap is not enough.
        if sum(a != b for a, b in zip(DIRECTIONS, order, strict=True)) >= 3:
            return dict(zip(DIRECTIONS, order, strict=True))


def generate(*, difficulty: int, rng: random.Random) -> GeneratedEnvironment:
    level = clamp_difficulty(difficulty)
    size, kind, extra, pillars = LEVELS[level]
    compass = _compass(kind, rng)
    params = {
        "size": size,
        "compass": compass,
        "max_steps": 2 * (size - 1) + extra,
        "pillars": pillars,
        "salt": rng.randrange(10**6),
    }
    mapping = ", ".join(f"saying {said} moves you {true}" for said, true in compass.items())
    lead = "The compass is honest" if kind == "honest" else "The compass is scrambled"
    return family_environment(
        label=LABEL, family=NAME, level=level, template=TEMPLATE, params=params,
        hint=f"{lead}: {mapping}.",
    )


def recognises(task: str) -> bool:
    return task.startswith("Scrambled-compass maze.")


_WHERE = re.compile(r"at row (\d+), column (\d+)\. The exit is at row (\d+), column (\d+)")
_HINT = re.compile(r"saying (north|east|south|west) moves you (north|east|south|west)")


def hinted_compass(hint: str | None) -> dict[str, str] | None:
    """Return {said: true direction} from a hint listing 'saying X moves you Y' pairs."""
    pairs = dict(_HINT.findall(hint or ""))
    return pairs if len(pairs) == 4 else None


def _positions(view: SolverView) -> list[tuple[int, int, int, int] | None]:
    found = []
    for observation in view.observations:
        match = _WHERE.search(observation)
        found.append(tuple(int(v) for v in match.groups()) if match else None)
    return found


def act(view: SolverView) -> tuple[str, str]:
    """Return (reasoning, action) for this skill."""
    positions = _positions(view)
    here = positions[-1] or next((p for p in reversed(positions) if p), (0, 0, 0, 0))
    row, col, goal_row, goal_col = here
    wanted = []
    if goal_row != row:
        wanted.append("south" if goal_row > row else "north")
    if goal_col != col:
        wanted.append("east" if goal_col > col else "west")
    wanted = wanted or ["north"]
    if view.skill == "random":
        return "Any direction.", f"go {view.rng.choice(DIRECTIONS)}"
    compass = hinted_compass(view.hint)
    if view.skill == "greedy":
        if compass:
            # The hint fixes the words, but greedy never plans round a pillar.
            word_for = {true: said for said, true in compass.items()}
            return "Straight for the exit with the hint's compass.", f"go {word_for[wanted[0]]}"
        return _greedy(view, positions, wanted)
    if compass:
        word_for = {true: said for said, true in compass.items()}
        choice = wanted[0]
        if "bump" in view.latest and len(wanted) > 1 and view.actions:
            # Blocked: go round by the other useful direction.
            last_true = compass.get(view.actions[-1].split()[-1])
            choice = next((w for w in wanted if w != last_true), wanted[0])
        return "Using the compass from the hint.", f"go {word_for[choice]}"
    return _explore(view, positions, wanted)


def _greedy(view: SolverView, positions: list, wanted: list[str]) -> tuple[str, str]:
    """Head for the exit trusting the compass; after a move that did not help, try another word."""
    if len(positions) >= 2 and positions[-1] and positions[-2]:
        before, after = positions[-2], positions[-1]
        closer = abs(after[0] - after[2]) + abs(after[1] - after[3]) < abs(
            before[0] - before[2]
        ) + abs(before[1] - before[3])
        if not closer:
            last = view.actions[-1].split()[-1]
            other = view.rng.choice([d for d in DIRECTIONS if d != last])
            return "That did not help.", f"go {other}"
    return "Straight for the exit.", f"go {wanted[0]}"


def _explore(view: SolverView, positions: list, wanted: list[str]) -> tuple[str, str]:
    """Learn what each word does from the moves made so far, then walk with the learnt words."""
    learnt: dict[str, str | None] = {}  # said -> true direction, or None when it hit a wall
    for index, action in enumerate(view.actions):
        said = action.split()[-1] if action.split() else ""
        before, after = positions[index], positions[index + 1]
        if said not in DIRECTIONS or not before or not after:
            continue
        delta = (after[0] - before[0], after[1] - before[1])
        moved = next((d for d, v in DELTAS.items() if v == delta), None)
        learnt[said] = moved if moved else learnt.get(said)
    for said, true in learnt.items():
        if true in wanted:
            return f"`{said}` moves me {true}.", f"go {said}"
    untried = [d for d in DIRECTIONS if d not in learnt]
    if untried:
        return "Testing what a compass word does.", f"go {untried[0]}"
    return "Nothing left to learn.", f"go {view.rng.choice(DIRECTIONS)}"
