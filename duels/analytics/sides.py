"""Duel sides derived from stored episodes: pass rates, hint gain, setter score, outcome."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from duels.analytics.data import DuelRecord, EpisodeRecord


class Side(NamedTuple):
    """One setter against one solver inside a duel."""

    duel: int
    setter: str
    solver: str
    environment: str | None
    valid: bool
    p_unhinted: float | None
    p_hinted: float | None
    hint_gain: float | None
    setter_score: float
    flips: int
    observe: bool


class Game(NamedTuple):
    """A duel as a game for ratings: `score` is A's points (1 win, 0.5 draw, 0 loss)."""

    duel: int
    a: str
    b: str
    score: float


class EpisodeTally:
    """Per-seed results of one solver on one environment within one duel."""

    __slots__ = ("hinted", "unhinted")

    def __init__(self) -> None:
        self.unhinted: dict[int, bool] = {}
        self.hinted: dict[int, bool] = {}


def episodes_by_duel_side(
    episodes: Iterable[EpisodeRecord],
) -> dict[tuple[int, str, str], EpisodeTally]:
    """Group duel episodes by (duel, environment, solver)."""
    tallies: dict[tuple[int, str, str], EpisodeTally] = defaultdict(EpisodeTally)
    for episode in episodes:
        if episode.duel is None:
            continue
        tally = tallies[(episode.duel, episode.environment, episode.solver)]
        bucket = tally.hinted if episode.hinted else tally.unhinted
        bucket[episode.seed] = episode.success
    return tallies


def _side(duel: DuelRecord, setter: str, solver: str, environment: str | None,
          tallies: dict[tuple[int, str, str], EpisodeTally]) -> Side:
    tally = tallies.get((duel.key, environment, solver)) if environment else None
    if tally is None or not tally.unhinted or not tally.hinted:
        # A forfeited (invalid) environment, or one never played, scores 0 for its setter.
        return Side(duel.key, setter, solver, environment, False, None, None, None, 0.0, 0,
                    duel.observe)
    p_unhinted = sum(tally.unhinted.values()) / len(tally.unhinted)
    p_hinted = sum(tally.hinted.values()) / len(tally.hinted)
    flips = sum(
        1 for seed, passed in tally.hinted.items()
        if passed and tally.unhinted.get(seed) is False
    )
    return Side(duel.key, setter, solver, environment, True, p_unhinted, p_hinted,
                p_hinted - p_unhinted, p_hinted * (1 - p_unhinted), flips, duel.observe)


def duel_sides(
    duels: Iterable[DuelRecord], episodes: Iterable[EpisodeRecord]
) -> tuple[list[Side], list[Game]]:
    """Both sides of every duel and the duel as a game, all recomputed from episodes."""
    tallies = episodes_by_duel_side(episodes)
    sides: list[Side] = []
    games: list[Game] = []
    for duel in duels:
        side_a = _side(duel, duel.a, duel.b, duel.env_a, tallies)
        side_b = _side(duel, duel.b, duel.a, duel.env_b, tallies)
        sides.extend((side_a, side_b))
        if side_a.setter_score > side_b.setter_score:
            score = 1.0
        elif side_a.setter_score < side_b.setter_score:
            score = 0.0
        else:
            score = 0.5
        games.append(Game(duel.key, duel.a, duel.b, score))
    return sides, games
