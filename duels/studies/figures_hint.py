"""Where the hint mattered: the step at which the hinted and unhinted plays of one solver on one
seed part ways, gathered over the field.

Pure: plain sequences of actions in, plain data out. A *pair* is a solver's unhinted and hinted
play of one version on one seed, both decided. The two part at the first step (numbered as
stored, the first action is step 1) whose action differs, or where one play ended and the other
went on; a pair whose plays took the same actions throughout never parted. The version's step
is the parting step most pairs share (the earliest of equals), with what came just before it and
what each condition did there, so a sentence can say, e.g., "after `open gate`, 6 of 8 unhinted
plays stopped; with the hint, 7 of 8 went on to `say word`". Definition: docs/results.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

ENDED = None  # a play that took no action at the parting step: it had ended


@dataclass(frozen=True)
class PlayPair:
    """One solver's two plays of one version on one seed: their actions in step order."""

    unhinted: Sequence[str]
    hinted: Sequence[str]
    unhinted_passed: bool
    hinted_passed: bool


@dataclass(frozen=True)
class HintMattered:
    step: int | None  # the parting step most pairs share; None when no pair parted
    pairs: int  # matched pairs looked at
    parted: int  # how many of them parted at `step`
    after: str | None  # the action most of those pairs shared just before `step` (None at 1)
    after_count: int
    unhinted_next: str | None  # what most unhinted plays did at `step` (None: they had ended)
    unhinted_next_count: int
    hinted_next: str | None  # what most hinted plays did at `step` (None: they had ended)
    hinted_next_count: int
    unhinted_passed: int  # of the pairs that parted at `step`, unhinted plays that passed
    hinted_passed: int  # … and hinted plays that passed

    def as_json(self) -> dict:
        """The three numbers `analytics --study --json` prints."""
        return {"step": self.step, "pairs": self.pairs, "parted": self.parted}


def parting_step(unhinted: Sequence[str], hinted: Sequence[str]) -> int | None:
    """The first step (1-based) whose action differs, or where only one play went on; None
    when both took the same actions throughout."""
    for index, (left, right) in enumerate(zip(unhinted, hinted, strict=False)):
        if left != right:
            return index + 1
    if len(unhinted) != len(hinted):
        return min(len(unhinted), len(hinted)) + 1
    return None


def _action_at(actions: Sequence[str], step: int) -> str | None:
    return actions[step - 1] if len(actions) >= step else ENDED


def _most_common(values: list) -> tuple[str | None, int]:
    """The most frequent value (ties: the first in sorted order, None last), and its count."""
    if not values:
        return None, 0
    counts = Counter(values)
    best = max(counts.values())
    tied = sorted((value for value, count in counts.items() if count == best),
                  key=lambda value: (value is None, value or ""))
    return tied[0], best


def hint_mattered(pairs: Sequence[PlayPair]) -> HintMattered | None:
    """Where the hinted and unhinted plays of the same solver and seed part ways over the field;
    None without a matched pair."""
    if not pairs:
        return None
    steps = [parting_step(pair.unhinted, pair.hinted) for pair in pairs]
    parted_steps = Counter(step for step in steps if step is not None)
    if not parted_steps:
        return HintMattered(step=None, pairs=len(pairs), parted=0, after=None, after_count=0,
                            unhinted_next=None, unhinted_next_count=0, hinted_next=None,
                            hinted_next_count=0, unhinted_passed=0, hinted_passed=0)
    most = max(parted_steps.values())
    step = min(value for value, count in parted_steps.items() if count == most)
    there = [pair for pair, parted_at in zip(pairs, steps, strict=True) if parted_at == step]
    after, after_count = (_most_common([pair.hinted[step - 2] for pair in there])
                          if step > 1 else (None, 0))
    unhinted_next, unhinted_count = _most_common([_action_at(pair.unhinted, step)
                                                  for pair in there])
    hinted_next, hinted_count = _most_common([_action_at(pair.hinted, step) for pair in there])
    return HintMattered(
        step=step, pairs=len(pairs), parted=len(there), after=after, after_count=after_count,
        unhinted_next=unhinted_next, unhinted_next_count=unhinted_count,
        hinted_next=hinted_next, hinted_next_count=hinted_count,
        unhinted_passed=sum(pair.unhinted_passed for pair in there),
        hinted_passed=sum(pair.hinted_passed for pair in there))


def _quoted(action: str | None, *, limit: int = 80) -> str:
    if action is None:
        return "stopped (the play had ended)"
    text = " ".join(action.split()) or "(no readable action)"
    return f"`{text[:limit]}{'…' if len(text) > limit else ''}`"


def hint_mattered_sentence(result: HintMattered | None) -> str:
    """The finding in words, computed from the same numbers the JSON prints."""
    if result is None:
        return "No solver played this version on a seed in both conditions with a result yet."
    if result.step is None:
        return (f"The hint changed no play: in all {result.pairs} pair{_s(result.pairs)} of "
                "plays, the hinted and unhinted plays took the same actions throughout.")
    where = (f"after {_quoted(result.after)} (step {result.step - 1})" if result.after
             else "at the first action")
    unhinted = ("stopped there" if result.unhinted_next is None
                else f"went on with {_quoted(result.unhinted_next)}")
    hinted = ("stopped there" if result.hinted_next is None
              else f"went on to {_quoted(result.hinted_next)}")
    return (f"{result.parted} of {result.pairs} pair{_s(result.pairs)} parted at step "
            f"{result.step}, {where}: {result.unhinted_next_count} of {result.parted} unhinted "
            f"plays {unhinted} ({result.unhinted_passed} of {result.parted} passed); with the "
            f"hint, {result.hinted_next_count} of {result.parted} {hinted} "
            f"({result.hinted_passed} of {result.parted} passed).")


def _s(count: int) -> str:
    return "" if count == 1 else "s"
