"""Duel sides for the analytics: each duel scored by the one rule in `duels.scoring`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from duels.analytics.data import DuelRecord, EpisodeRecord
from duels.scoring import DuelScore, SideScore, duel_score_from_episodes


class Side(NamedTuple):
    """One setter against one solver inside a duel; `valid` means the side was played."""

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


def episodes_by_duel(episodes: Iterable[EpisodeRecord]) -> dict[int, list[EpisodeRecord]]:
    """Duel episodes grouped by duel key."""
    grouped: dict[int, list[EpisodeRecord]] = defaultdict(list)
    for episode in episodes:
        if episode.duel is not None:
            grouped[episode.duel].append(episode)
    return grouped


def duel_record_score(duel: DuelRecord, episodes: Iterable[EpisodeRecord]) -> DuelScore:
    """The one scoring rule applied to a duel record and its episodes."""
    return duel_score_from_episodes(
        forfeit_a=duel.forfeit_a, forfeit_b=duel.forfeit_b, env_a=duel.env_a, env_b=duel.env_b,
        void_a=duel.void_a, void_b=duel.void_b,
        episodes=((e.environment, e.hinted, e.seed, e.success) for e in episodes),
    )


def _side(duel: DuelRecord, setter: str, solver: str, environment: str | None,
          score: SideScore) -> Side:
    # A forfeited side scores 0 for its setter; it has no pass rates.
    return Side(duel.key, setter, solver, environment, score.played, score.p_unhinted,
                score.p_hinted, score.hint_gain, score.setter_score or 0.0, score.flips or 0,
                duel.observe)


def duel_sides(
    duels: Iterable[DuelRecord], episodes: Iterable[EpisodeRecord]
) -> tuple[list[Side], list[Game]]:
    """Both sides of every scorable duel and the duel as a game, scored by `duels.scoring`.

    A duel with an unplayed side (no forfeit recorded, episodes missing) has no outcome and is
    left out, never counted as a draw.
    """
    grouped = episodes_by_duel(episodes)
    sides: list[Side] = []
    games: list[Game] = []
    for duel in duels:
        score = duel_record_score(duel, grouped.get(duel.key, ()))
        if score.outcome is None:
            continue
        sides.append(_side(duel, duel.a, duel.b, duel.env_a, score.a))
        sides.append(_side(duel, duel.b, duel.a, duel.env_b, score.b))
        games.append(Game(duel.key, duel.a, duel.b, score.points_a))
    return sides, games


def voided_sides(duels: Iterable[DuelRecord]) -> int:
    """How many duel sides were voided after play (their environment's episodes count nowhere)."""
    return sum(duel.void_a + duel.void_b for duel in duels)
