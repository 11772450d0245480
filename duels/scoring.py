"""Duel scoring: pass rates, hint gain, setter score, flips and the outcome.

Pure functions of per-seed results, so scores can always be recomputed from stored episodes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SideScore:
    """One side of a duel: the setter's environment against the other player as solver."""

    p_unhinted: float
    p_hinted: float
    hint_gain: float
    setter_score: float
    flips: int


FORFEIT_SCORE = SideScore(p_unhinted=0.0, p_hinted=0.0, hint_gain=0.0, setter_score=0.0, flips=0)


def side_score(*, unhinted: dict[int, bool], hinted: dict[int, bool]) -> SideScore:
    """Score one side from success per seed in each condition.

    `s = p_h * (1 - p_u)`; flips are seeds failed unhinted and passed hinted.
    """
    if not unhinted or not hinted:
        raise ValueError("a side needs at least one episode in each condition")
    p_unhinted = sum(unhinted.values()) / len(unhinted)
    p_hinted = sum(hinted.values()) / len(hinted)
    flips = sum(1 for seed, passed in hinted.items() if passed and not unhinted.get(seed, False))
    return SideScore(
        p_unhinted=p_unhinted,
        p_hinted=p_hinted,
        hint_gain=p_hinted - p_unhinted,
        setter_score=p_hinted * (1.0 - p_unhinted),
        flips=flips,
    )


def duel_outcome(*, score_a: float, score_b: float) -> str:
    """Return "a" or "b" for the higher setter score, "draw" when they are equal."""
    # Scores are products of k-ths; compare with a tolerance so 0.1+0.2 style noise is a draw.
    if abs(score_a - score_b) < 1e-9:
        return "draw"
    return "a" if score_a > score_b else "b"
