"""A round robin of built-in players shows what the product is for: hints that matter.

The demo tournament (`manage.py demo_tournament`) plays the whole built-in roster. Here the same
round robin (roster, rounds, k, observe mode) runs through the real engine and sandbox with no
latency, and the figures are recomputed from the stored episodes: some duels must be decisive and
hints must raise pass rates on average — so the demo cannot silently slide back to all 0.00-0.00
draws.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from fractions import Fraction

import pytest

from duels.analytics.compute import analytics_compute
from duels.analytics.findings import VERDICTS
from duels.engine.scheduler import tournament_drive
from duels.engine.tournaments import tournament_create
from duels.management.commands.demo_tournament import DEMO_ATTEMPTS, DEMO_PLAYERS, DEMO_ROUNDS
from duels.models import Condition, Episode, Player, Status
from duels.scoring import duel_outcome
from duels.selectors.analytics import analytics_input
from duels.services.players import player_seed_builtin

# An autouse fixture: skip without a sandbox backend, else use the quickest real one.
from tests.duels.engine.test_tournament_run import sandbox_backend  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_latency(settings):
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0


def side_rates(duel, side: str) -> tuple[Fraction, Fraction] | None:
    """(unhinted, hinted) pass rate on one side's environment, from its stored episodes."""
    environment = getattr(duel, f"env_{side}")
    if environment is None or getattr(duel, f"forfeit_{side}"):
        return None
    episodes = Episode.objects.filter(duel=duel, environment=environment, status=Status.FINISHED)
    rates = []
    for condition in (Condition.UNHINTED, Condition.HINTED):
        wins = [bool(e.success) for e in episodes.filter(condition=condition)]
        assert len(wins) == duel.attempts, (duel.uuid, side, condition, len(wins))
        rates.append(Fraction(sum(wins), len(wins)))
    return rates[0], rates[1]


def test_a_builtin_round_robin_has_hint_gains_and_decisive_duels():
    player_seed_builtin()
    players = list(Player.objects.filter(name__in=DEMO_PLAYERS))
    assert len(players) == len(DEMO_PLAYERS) >= 4
    tournament = tournament_create(players=players, rounds=DEMO_ROUNDS, attempts=DEMO_ATTEMPTS,
                                   observe=True, concurrency=6)
    assert tournament_drive(tournament=tournament) is True

    gains, decisive, setter_scores, solver_gains = [], 0, defaultdict(list), defaultdict(list)
    for duel in tournament.duels.all():
        assert duel.status == Status.FINISHED
        scores = {}
        for side in "ab":
            rates = side_rates(duel, side)
            if rates is None:
                scores[side] = Fraction(0)
                continue
            p_unhinted, p_hinted = rates
            gains.append(float(p_hinted - p_unhinted))
            solver_gains[(duel.b if side == "a" else duel.a).name].append(
                float(p_hinted - p_unhinted))
            scores[side] = p_hinted * (1 - p_unhinted)
        setter_scores[duel.a.name].append(float(scores["a"]))
        setter_scores[duel.b.name].append(float(scores["b"]))
        outcome = duel_outcome(score_a=scores["a"], score_b=scores["b"])
        assert outcome == duel.outcome, (duel.uuid, scores, duel.outcome)
        decisive += outcome != "draw"

    means = {name: statistics.fmean(values) for name, values in sorted(setter_scores.items())}
    learners = {name: statistics.fmean(values) for name, values in sorted(solver_gains.items())}
    print(f"\nvalid environments {len(gains)}, hint gains {gains}, decisive duels {decisive}, "
          f"mean setter scores {means}, mean hint gain by solver {learners}")
    assert len(gains) >= tournament.duels_total, "most built-in environments must validate"
    assert decisive >= 1, "every duel was a draw"
    assert statistics.fmean(gains) > 0, gains
    # A ranking, not a single winner: more than one setter scores.
    assert sum(mean > 0 for mean in means.values()) >= 2, means
    # Hints are not one player's privilege: several solvers learn from them.
    assert sum(gain > 0 for gain in learners.values()) >= 3, learners

    # The analytics of the demo round robin: five findings, each with a verdict, and every
    # finished duel rated (none lost to a forfeit read from an environment's status).
    result = analytics_compute(analytics_input(), resamples=200)
    assert [finding["verdict"] in VERDICTS for finding in result["findings"]] == [True] * 5
    assert sum(row["duels"] for row in result["ratings"]) == 2 * tournament.duels_total
