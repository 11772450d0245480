from __future__ import annotations

import itertools
from collections import Counter

import pytest

from duels.engine.duels import DuelError
from duels.engine.tournaments import (
    tournament_cancel,
    tournament_create,
    tournament_finalize_if_complete,
    tournament_summary,
)
from duels.models import Status

pytestmark = pytest.mark.django_db


def test_round_robin_meets_every_pair_once_per_round(make):
    players = [make.player() for _ in range(4)]
    tournament = tournament_create(players=players, rounds=2, attempts=3, concurrency=5)
    duels = list(tournament.duels.all())
    assert tournament.duels_total == len(duels) == 12
    pairs = Counter((duel.round_index, frozenset((duel.a_id, duel.b_id))) for duel in duels)
    expected = {(r, frozenset((x.pk, y.pk))) for r in range(2)
                for x, y in itertools.combinations(players, 2)}
    assert set(pairs) == expected
    assert set(pairs.values()) == {1}
    assert {duel.attempts for duel in duels} == {3}
    assert {duel.status for duel in duels} == {Status.PENDING}
    assert tournament.prompt_version


def test_a_tournament_needs_two_players(make):
    player = make.player()
    with pytest.raises(DuelError):
        tournament_create(players=[player, player])


def test_cancel_marks_the_tournament_and_its_open_duels(make):
    tournament = tournament_create(players=[make.player() for _ in range(3)], attempts=1)
    tournament = tournament_cancel(tournament=tournament)
    assert tournament.status == Status.CANCELLED
    assert set(tournament.duels.values_list("status", flat=True)) == {Status.CANCELLED}
    assert tournament.duels_done == 3


def test_summary_gives_each_player_its_mean_setter_score(make):
    a, b = make.player(name="alpha"), make.player(name="beta", params={
        "setter_style": "observer", "solver_skill": "search", "seed": 9})
    tournament = make.tournament(players=[a, b], status=Status.RUNNING)
    make.finished_duel(a=a, b=b, tournament=tournament, unhinted_a=(False, False),
                       hinted_a=(True, True), unhinted_b=(True, False), hinted_b=(True, True))
    make.finished_duel(a=b, b=a, tournament=tournament, unhinted_a=(False, False),
                       hinted_a=(True, False), unhinted_b=(False, False), hinted_b=(False, False))
    summary = tournament_summary(tournament=tournament)
    assert summary["players"]["alpha"]["mean_setter_score"] == pytest.approx((1.0 + 0.0) / 2)
    assert summary["players"]["beta"]["mean_setter_score"] == pytest.approx((0.5 + 0.5) / 2)
    assert summary["players"]["alpha"]["wins"] == 1
    assert summary["observe_setter_mean_score"] == {"beta": pytest.approx(0.5)}
    assert tournament_finalize_if_complete(tournament=tournament) is True
    tournament.refresh_from_db()
    assert tournament.status == Status.FINISHED
    assert tournament.summary["players"]["beta"]["duels"] == 2
