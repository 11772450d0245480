"""The one scoring rule: a duel's per-seed results → both sides and the outcome.

Pure: no database, no settings. The engine's finalize step, the importer's outcome check, the
analytics, the API, the exports and the pages all get their pass rates, hint gains, setter
scores, flips and outcomes from `duel_score`, so every reader agrees to the last digit.

Rules (README, "Reading the results"):
- A side is *forfeited* when its duel recorded a forfeit for it (invalid environment, failed
  authoring); it scores 0 and has no pass rates. Otherwise it is *played* when it has at least
  one episode in each condition, and *unplayed* (not scorable yet) when it does not.
- A side is *voided* when its duel recorded that the check after play voided it (its
  environment was not the same puzzle on the path played, or showed the hint unasked): like a
  forfeit it scores 0 for its setter and has no pass rates; none of its episodes counts.
- An episode passes only when it finished with success; any other end counts as not passed.
- `p_u`, `p_h` are pass shares over the seeds present in each condition; `g = p_h − p_u`;
  `s = p_h · (1 − p_u)`; flips are seeds present in both conditions failed unhinted and passed
  hinted.
- The outcome compares the two setter scores exactly as fractions (k = 3 gives 1/3, never
  0.3333333333333333 against 0.33333333333333337); equal is a draw; a duel with an unplayed
  side has no outcome.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

FINISHED = "finished"  # the status vocabulary's name for an episode that ended normally


def episode_passed(*, status: str, success: bool | None) -> bool:
    """Whether an episode counts as passed: finished, with success."""
    return status == FINISHED and bool(success)


# The status and end reason of an episode the environment's own fault ended (see EndReason).
FAILED, ENVIRONMENT_FAULT = "failed", "env_error"


def episode_decided(*, status: str, end_reason: str) -> bool:
    """Whether an ended episode is a result of a field (a study's play, a panel's evaluation):
    it finished, or the environment's own fault ended it (then it did not pass). One that
    infrastructure faults or a cancellation ended is incomplete: never a result, as the
    original harness leaves any status but success and failure out."""
    return status == FINISHED or (status == FAILED and end_reason == ENVIRONMENT_FAULT)


@dataclass(frozen=True)
class SideResults:
    """What a duel holds for one side: its forfeit flag and success per seed in each condition."""

    forfeited: bool = False
    voided: bool = False
    unhinted: Mapping[int, bool] = field(default_factory=dict)
    hinted: Mapping[int, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class SideScore:
    """One side of a duel: the setter's environment against the other player as solver."""

    forfeited: bool
    played: bool
    p_unhinted: float | None
    p_hinted: float | None
    hint_gain: float | None
    setter_score: float | None
    flips: int | None
    exact_setter_score: Fraction | None
    voided: bool = False

    @property
    def scored(self) -> bool:
        """Played or forfeited: the side has a setter score."""
        return self.exact_setter_score is not None


@dataclass(frozen=True)
class DuelScore:
    """Both sides and the outcome (`a`, `b`, `draw`, or None while a side is unplayed)."""

    a: SideScore
    b: SideScore
    outcome: str | None

    @property
    def points_a(self) -> float | None:
        """A's points for ratings: 1 for a win, 0.5 for a draw, 0 for a loss."""
        return {"a": 1.0, "b": 0.0, "draw": 0.5}.get(self.outcome) if self.outcome else None

    def side(self, name: str) -> SideScore:
        return self.a if name == "a" else self.b


def side_score(*, results: SideResults) -> SideScore:
    """Score one side (see the module rules)."""
    if results.forfeited or results.voided:
        return SideScore(forfeited=results.forfeited, played=False, p_unhinted=None,
                         p_hinted=None, hint_gain=None, setter_score=0.0, flips=None,
                         exact_setter_score=Fraction(0), voided=results.voided)
    if not results.unhinted or not results.hinted:
        return SideScore(forfeited=False, played=False, p_unhinted=None, p_hinted=None,
                         hint_gain=None, setter_score=None, flips=None, exact_setter_score=None)
    p_unhinted = Fraction(sum(map(bool, results.unhinted.values())), len(results.unhinted))
    p_hinted = Fraction(sum(map(bool, results.hinted.values())), len(results.hinted))
    exact = p_hinted * (1 - p_unhinted)
    flips = sum(1 for seed, passed in results.hinted.items()
                if passed and results.unhinted.get(seed) is False)
    return SideScore(
        forfeited=False, played=True, p_unhinted=float(p_unhinted), p_hinted=float(p_hinted),
        hint_gain=float(p_hinted - p_unhinted), setter_score=float(exact), flips=flips,
        exact_setter_score=exact,
    )


def duel_outcome(*, score_a: Fraction | int, score_b: Fraction | int) -> str:
    """`a` or `b` for the strictly higher exact setter score, `draw` when they are equal."""
    if isinstance(score_a, float) or isinstance(score_b, float):
        raise TypeError("compare exact setter scores (fractions), not floats")
    if score_a == score_b:
        return "draw"
    return "a" if score_a > score_b else "b"


def duel_score(*, a: SideResults, b: SideResults) -> DuelScore:
    """Both sides of a duel and its outcome."""
    side_a, side_b = side_score(results=a), side_score(results=b)
    outcome = None
    if side_a.scored and side_b.scored:
        outcome = duel_outcome(score_a=side_a.exact_setter_score,
                               score_b=side_b.exact_setter_score)
    return DuelScore(a=side_a, b=side_b, outcome=outcome)


def duel_score_from_episodes(
    *,
    forfeit_a: bool,
    forfeit_b: bool,
    env_a: object | None,
    env_b: object | None,
    episodes: Iterable[tuple[object, bool, int, bool]],
    void_a: bool = False,
    void_b: bool = False,
) -> DuelScore:
    """Score a duel from its episodes as (environment, hinted, seed, passed).

    Side "a" is A's environment `env_a` (played by B); episodes on other environments are
    ignored. A side without an environment has no episodes; a voided side's are not counted.
    """
    tallies: dict[str, tuple[dict[int, bool], dict[int, bool]]] = {"a": ({}, {}), "b": ({}, {})}
    for environment, hinted, seed, passed in episodes:
        for name, side_environment in (("a", env_a), ("b", env_b)):
            if side_environment is not None and environment == side_environment:
                tallies[name][1 if hinted else 0][seed] = bool(passed)
    return duel_score(
        a=SideResults(forfeited=forfeit_a, voided=void_a, unhinted=tallies["a"][0],
                      hinted=tallies["a"][1]),
        b=SideResults(forfeited=forfeit_b, voided=void_b, unhinted=tallies["b"][0],
                      hinted=tallies["b"][1]),
    )


@dataclass(frozen=True)
class FieldScore:
    """One environment against several solvers: the means of what it earns against each."""

    solvers: int  # solvers with a played side
    p_unhinted: float | None
    p_hinted: float | None
    setter_score: float | None
    exact_setter_score: Fraction | None


def field_score(*, sides: Iterable[SideResults]) -> FieldScore:
    """Score one environment against several solvers, one SideResults per solver: the mean of
    the setter scores (and of the pass rates) of its played sides, each scored by `side_score`
    — what the environment would earn on average in a duel against each of them. A forfeited
    side makes the whole environment 0 (an invalid environment is one for every solver); with
    no played side there is no score yet."""
    scores = [side_score(results=results) for results in sides]
    if any(score.forfeited for score in scores):
        return FieldScore(solvers=0, p_unhinted=None, p_hinted=None, setter_score=0.0,
                          exact_setter_score=Fraction(0))
    played = [score for score in scores if score.played]
    if not played:
        return FieldScore(solvers=0, p_unhinted=None, p_hinted=None, setter_score=None,
                          exact_setter_score=None)
    exact = sum((score.exact_setter_score for score in played), Fraction(0)) / len(played)
    return FieldScore(
        solvers=len(played),
        p_unhinted=sum(score.p_unhinted for score in played) / len(played),
        p_hinted=sum(score.p_hinted for score in played) / len(played),
        setter_score=float(exact), exact_setter_score=exact,
    )
