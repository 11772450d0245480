"""One scoring rule everywhere: random duels give the same outcome and side figures through the
engine's finalize step, an export → import round trip, and the analytics.

The expected figures are computed here by hand (fractions over the generated per-seed results),
independently of `duels.scoring`.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from fractions import Fraction

import pytest

from duels.analytics.sides import duel_sides
from duels.engine.duels import duel_finalize_if_complete, duel_result
from duels.exchange.export import exchange_export
from duels.exchange.importer import exchange_import
from duels.exchange.selectors import exchange_everything
from duels.models import (
    AnalyticsSnapshot,
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Player,
    Status,
    Tournament,
)
from duels.selectors.analytics import analytics_input
from duels.services.analytics import analytics_refresh

pytestmark = pytest.mark.django_db

DUELS = 40


@dataclass
class PlannedSide:
    forfeit: str  # "" when played
    unhinted: list[bool]  # passed, per seed
    hinted: list[bool]
    faults: set[tuple[bool, int]]  # (hinted, seed) episodes that ended by an environment fault

    def passed(self, hinted: bool, seed: int) -> bool:
        results = self.hinted if hinted else self.unhinted
        return results[seed] and (hinted, seed) not in self.faults

    def expected(self) -> dict:
        if self.forfeit:
            return {"p_unhinted": None, "p_hinted": None, "setter_score": Fraction(0),
                    "flips": None}
        k = len(self.unhinted)
        p_u = Fraction(sum(self.passed(False, s) for s in range(k)), k)
        p_h = Fraction(sum(self.passed(True, s) for s in range(k)), k)
        flips = sum(1 for s in range(k) if self.passed(True, s) and not self.passed(False, s))
        return {"p_unhinted": p_u, "p_hinted": p_h, "setter_score": p_h * (1 - p_u),
                "flips": flips}


def plan_side(rng: random.Random, k: int) -> PlannedSide:
    if rng.random() < 0.2:
        return PlannedSide(forfeit=rng.choice(["environment failed validation",
                                               "malformed answer after one repair request"]),
                           unhinted=[], hinted=[], faults=set())
    # Skewed pass probabilities so that ties and wins both occur often.
    p_u, p_h = rng.choice([0.0, 0.2, 0.5]), rng.choice([0.5, 0.8, 1.0])
    faults = {(rng.random() < 0.5, s) for s in range(k) if rng.random() < 0.1}
    return PlannedSide(forfeit="", unhinted=[rng.random() < p_u for _ in range(k)],
                       hinted=[rng.random() < p_h for _ in range(k)], faults=faults)


def expected_outcome(side_a: PlannedSide, side_b: PlannedSide) -> str:
    score_a, score_b = side_a.expected()["setter_score"], side_b.expected()["setter_score"]
    return "draw" if score_a == score_b else ("a" if score_a > score_b else "b")


def build_duel(make, rng: random.Random, players: list[Player], tournament: Tournament):
    a, b = rng.sample(players, 2)
    k = rng.randint(1, 10)
    sides = {"a": plan_side(rng, k), "b": plan_side(rng, k)}
    duel = Duel.objects.create(a=a, b=b, attempts=k, tournament=tournament,
                               status=Status.RUNNING)
    for name, setter, solver in (("a", a, b), ("b", b, a)):
        side = sides[name]
        if side.forfeit and rng.random() < 0.5:
            setattr(duel, f"forfeit_{name}", side.forfeit)  # no environment was written
            continue
        # Environments never validated here (an older study's export) are as playable as
        # valid ones; a forfeited side's environment failed validation.
        if side.forfeit:
            status, validation = EnvironmentStatus.INVALID, {"valid": False, "checks": []}
        elif rng.random() < 0.5:
            status, validation = EnvironmentStatus.PENDING, None
        else:
            status, validation = EnvironmentStatus.VALID, {"valid": True, "checks": []}
        environment = make.environment(author=setter, status=status, validation=validation)
        hint = Hint.objects.create(environment=environment, author=setter, text="a hint")
        setattr(duel, f"env_{name}", environment)
        setattr(duel, f"hint_{name}", hint)
        setattr(duel, f"forfeit_{name}", side.forfeit)
        if side.forfeit:
            continue
        Episode.objects.bulk_create([
            Episode(
                duel=duel, environment=environment, hint=hint if hinted else None,
                condition=Condition.HINTED if hinted else Condition.UNHINTED,
                solver=solver, seed=seed,
                status=Status.FAILED if fault else Status.FINISHED,
                success=None if fault else side.passed(hinted, seed),
                error="environment fault: step raised" if fault else "",
            )
            for seed in range(k) for hinted in (False, True)
            for fault in [(hinted, seed) in side.faults]
        ])
    duel.save()
    return duel, sides


def assert_stored(duel: Duel, sides: dict[str, PlannedSide]) -> None:
    duel.refresh_from_db()
    assert duel.status == Status.FINISHED
    assert duel.outcome == expected_outcome(sides["a"], sides["b"]), duel.uuid
    result = duel_result(duel=duel)
    assert result["outcome"] == duel.outcome
    for name in "ab":
        expected = sides[name].expected()
        for field in ("p_unhinted", "p_hinted", "setter_score", "flips"):
            value = None if expected[field] is None else float(expected[field])
            assert getattr(duel, f"{field}_{name}") == value, (duel.uuid, name, field)
            assert result[name][field] == value
        assert result[name]["valid"] is (not sides[name].forfeit)


def assert_analytics(planned: dict[str, dict[str, PlannedSide]]) -> None:
    data = analytics_input()
    sides, games = duel_sides(data.duels, data.episodes)
    assert len(games) == len(planned)
    uuid_of = {record.key: record.uuid for record in data.duels}
    points = {"a": 1.0, "b": 0.0, "draw": 0.5}
    for game in games:
        plan = planned[uuid_of[game.duel]]
        assert game.score == points[expected_outcome(plan["a"], plan["b"])]
    for side in sides:
        duel = next(record for record in data.duels if record.key == side.duel)
        plan = planned[duel.uuid]["a" if side.setter == duel.a else "b"]
        expected = plan.expected()
        assert side.valid is (not plan.forfeit)
        assert side.setter_score == float(expected["setter_score"])
        assert side.p_unhinted == (None if plan.forfeit else float(expected["p_unhinted"]))
        assert side.p_hinted == (None if plan.forfeit else float(expected["p_hinted"]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_duels_agree_through_engine_exchange_and_analytics(make, seed):
    rng = random.Random(seed)
    players = [make.player(name=f"p{seed}-{i}") for i in range(4)]
    tournament = make.tournament(players=players, status="finished")
    planned: dict[str, dict[str, PlannedSide]] = {}
    for _ in range(DUELS):
        duel, sides = build_duel(make, rng, players, tournament)
        assert duel_finalize_if_complete(duel=duel) is True
        assert_stored(duel, sides)
        planned[str(duel.uuid)] = sides
    outcomes = {expected_outcome(s["a"], s["b"]) for s in planned.values()}
    assert outcomes == {"a", "b", "draw"}  # the generator exercises every outcome
    assert_analytics(planned)

    exported = io.StringIO()
    exchange_export(querysets=exchange_everything(), out=exported)
    AnalyticsSnapshot.objects.all().delete()
    for model in (Episode, Duel, Tournament, Hint, Environment, Player):
        model.objects.all().delete()
    exchange_import(stream=io.BytesIO(exported.getvalue().encode()))
    for duel in Duel.objects.all():
        assert_stored(duel, planned[str(duel.uuid)])
    assert_analytics(planned)
    # And the figures the analytics report: every finished duel rated, none dropped as a draw.
    rated = sum(row["duels"] for row in analytics_refresh(resamples=50).data["ratings"])
    assert rated == 2 * DUELS
