"""Ranks that do not pretend: shared ranks for equal figures and rank ranges from the figures'
intervals.

Pure: plain lists, no numpy. Rules (docs/results.md, "Ranks and rank ranges"):
- shared rank: 1 + the number of models with a strictly higher figure, figures compared at 12
  significant digits (equal figures share a rank; the next rank skips, 1, 1, 3);
- rank range [best, worst]: best = 1 + the models *significantly* higher (whose interval's low
  end is above this model's high end), worst = the models with the figure − those significantly
  lower (LMArena's rule, both ways); models with equal figures take the widest range among them,
  so equal figures have equal rank ranges; the range always holds the shared rank. A figure
  without an interval counts as spanning its whole scale.
"""

from __future__ import annotations

from collections.abc import Sequence

Interval = Sequence[float] | None


def comparable(value: float) -> float:
    """The value as figures are compared: 12 significant digits, so two figures equal by
    definition are equal even when the sums that made them differ in the last bit."""
    return float(f"{value:.12g}")


def shared_ranks(values: Sequence[float | None]) -> list[int | None]:
    """1 + the number of strictly higher values; None where the value is undefined."""
    defined = [comparable(value) for value in values if value is not None]
    return [None if value is None else 1 + sum(other > comparable(value) for other in defined)
            for value in values]


def rank_ranges(values: Sequence[float | None], intervals: Sequence[Interval], *,
                scale: tuple[float, float] = (0.0, 1.0)) -> list[list[int] | None]:
    """[best, worst] rank per model by the rule above; None where the value is undefined."""
    spans = [None if value is None else
             (tuple(interval) if interval is not None else scale)
             for value, interval in zip(values, intervals, strict=True)]
    defined = [i for i, value in enumerate(values) if value is not None]
    ranked = len(defined)
    shared = shared_ranks(values)
    result: list[list[int] | None] = [None] * len(values)
    for i in defined:
        low, high = spans[i]
        above = sum(spans[j][0] > high for j in defined if j != i)
        below = sum(spans[j][1] < low for j in defined if j != i)
        ties = sum(comparable(values[j]) == comparable(values[i]) for j in defined)
        best = min(1 + above, shared[i])
        worst = max(ranked - below, shared[i] + ties - 1)
        result[i] = [best, worst]
    for i in defined:  # equal figures: the widest range among them
        equal = [j for j in defined if comparable(values[j]) == comparable(values[i])]
        result[i] = [min(result[j][0] for j in equal), max(result[j][1] for j in equal)]
    return result


def ranges_overlap(first: Sequence[int], second: Sequence[int]) -> bool:
    """Whether two rank ranges share a rank (the models are not separated)."""
    return first[0] <= second[1] and second[0] <= first[1]
