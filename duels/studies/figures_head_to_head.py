"""Head-to-head results derived from a study's field, scored by duels/scoring.py's rule.

For each pair of authors A and B: A's side is A's final versions as B played them, each scored
as a duel side (`side_score`: s = p_h · (1 − p_u) over B's seeds, exactly, as a fraction), and
A's score is the exact mean of those setter scores (a slot that ended without a valid version
counts 0, as an invalid environment forfeits a duel side; a version B did not play in both
conditions is not scorable and is left out). The outcome compares the two exact means
(`duel_outcome`); a pair where either side has nothing scorable has none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations

import numpy as np

from duels.scoring import SideResults, duel_outcome, side_score
from duels.studies.figures_field import Field

POINTS = {"a": 1.0, "b": 0.0, "draw": 0.5}


def _side(field: Field, versions: list[int], solver: int, failed: int) -> list[Fraction]:
    """Exact setter scores of the versions `solver` played in both conditions, and a 0 for
    each failed slot."""
    scores = [Fraction(0)] * failed
    for v in versions:
        unhinted, hinted = field.unhinted[v, solver].tolist(), field.hinted[v, solver].tolist()
        results = SideResults(unhinted={k: x == 1 for k, x in enumerate(unhinted) if x >= 0},
                              hinted={k: x == 1 for k, x in enumerate(hinted) if x >= 0})
        score = side_score(results=results)
        if score.scored:
            scores.append(score.exact_setter_score)
    return scores


def head_to_head_rows(field: Field, final: np.ndarray,
                      failed_slots: Mapping[str, int]) -> list[dict]:
    """One row per unordered pair of authors (models that are not evaluated players and wrote a
    final version or a failed slot), in the field's model order."""
    finals_of: dict[str, list[int]] = {}
    for v, version in enumerate(field.versions):
        if final[v] and version.author is not None:
            finals_of.setdefault(version.author, []).append(v)
    index = {name: i for i, name in enumerate(field.names)}
    authors = [model.name for model in field.models if not model.evaluated
               and (finals_of.get(model.name) or failed_slots.get(model.name, 0) > 0)]
    rows = []
    for a, b in combinations(authors, 2):
        side_a = _side(field, finals_of.get(a, []), index[b], failed_slots.get(a, 0))
        side_b = _side(field, finals_of.get(b, []), index[a], failed_slots.get(b, 0))
        exact_a = sum(side_a, Fraction(0)) / len(side_a) if side_a else None
        exact_b = sum(side_b, Fraction(0)) / len(side_b) if side_b else None
        outcome = (duel_outcome(score_a=exact_a, score_b=exact_b)
                   if exact_a is not None and exact_b is not None else None)
        rows.append({
            "a": a, "b": b,
            "a_score": float(exact_a) if exact_a is not None else None,
            "b_score": float(exact_b) if exact_b is not None else None,
            "outcome": outcome,
            "a_exact": str(exact_a) if exact_a is not None else None,
            "b_exact": str(exact_b) if exact_b is not None else None,
            "a_environments": len(side_a), "b_environments": len(side_b),
        })
    return rows


def head_to_head_games(rows: Sequence[Mapping]) -> list[tuple[str, str, float]]:
    """The decided rows as games (A, B, A's points: 1 win, ½ draw, 0 loss): the `games` that
    duels/analytics/ratings.py's `ratings_fit` and `cross_validated_accuracy` take; the fit's
    `points` and `boot_points` then feed `transitivity_fit` (duels/analytics/transitivity.py)."""
    return [(row["a"], row["b"], POINTS[row["outcome"]]) for row in rows
            if row.get("outcome") in POINTS]
