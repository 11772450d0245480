"""A setter's own figures beside design and hint authoring: the field's setter score of its final
versions, and what hardening changed for it (its final versions' unhinted pass rate minus its
first versions', slot by slot). Definitions: docs/results.md, "The study's answer".

Intervals: Student's t over the author's versions (slots), estimate ± t(n − 1)·sd/√n; where they
show no spread (one version, or the same value on every one), the score interval of the pooled
peer plays behind them (Wilson for the setter score, Newcombe for the change), as everywhere
else in the study's figures.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from duels.analytics.proportions import newcombe_difference
from duels.studies.figures_models import score_interval

SETTER_FIGURES = ("setter_score_final", "hardening_p_unhinted_change")


def _t_interval(values: list[float], bounds: tuple[float, float]) -> list[float] | None:
    from scipy.special import stdtrit

    n = len(values)
    if n < 2:
        return None
    spread = float(np.std(values, ddof=1))
    if not spread > 0:
        return None
    half = float(stdtrit(n - 1, 0.975)) * spread / np.sqrt(n)
    mean = float(np.mean(values))
    return [float(max(bounds[0], mean - half)), float(min(bounds[1], mean + half))]


def setter_rows(*, names: Sequence[str], versions: Sequence, scores: Sequence,
                unhinted: Sequence[tuple[int, int]]) -> dict[str, dict]:
    """Per model: {"setter_score_final", "hardening_p_unhinted_change", "intervals",
    "setter_plays"}. `versions` are the field's versions, `scores` their duels.scoring side
    scores (the peers pooled), `unhinted` their peers' (passed, played) unhinted plays."""
    by_slot: dict[str, list[int]] = {}
    for v, version in enumerate(versions):
        by_slot.setdefault(version.slot, []).append(v)
    result = {}
    for name in names:
        finals = [v for v, version in enumerate(versions)
                  if version.final and version.author == name
                  and scores[v].setter_score is not None]
        values = [float(scores[v].setter_score) for v in finals]
        plays = sum(unhinted[v][1] for v in finals)
        score = float(np.mean(values)) if values else None
        score_bounds = _t_interval(values, (0.0, 1.0))
        if score is not None and score_bounds is None and plays:
            score_bounds = list(score_interval(score, plays))
        changes, before, after, counted = [], [0, 0], [0, 0], 0
        for members in by_slot.values():
            first = min(members, key=lambda v: versions[v].revision)
            final = next((v for v in members if versions[v].final), None)
            if (versions[first].author != name or final is None or final == first
                    or scores[first].p_unhinted is None or scores[final].p_unhinted is None):
                continue
            changes.append(float(scores[final].p_unhinted) - float(scores[first].p_unhinted))
            for total, v in ((before, first), (after, final)):
                total[0] += unhinted[v][0]
                total[1] += unhinted[v][1]
            counted += 1
        change = float(np.mean(changes)) if changes else None
        change_bounds = _t_interval(changes, (-1.0, 1.0))
        if change is not None and change_bounds is None and before[1] and after[1]:
            low, high = newcombe_difference(after[0], after[1], before[0], before[1])
            pooled = after[0] / after[1] - before[0] / before[1]
            change_bounds = [max(-1.0, min(change, change - (pooled - low))),
                             min(1.0, max(change, change + (high - pooled)))]
        result[name] = {
            "setter_score_final": score, "hardening_p_unhinted_change": change,
            "intervals": {"setter_score_final": score_bounds,
                          "hardening_p_unhinted_change": change_bounds},
            "setter_plays": {"setter_score_final": plays, "hardened_slots": counted},
        }
    return result
