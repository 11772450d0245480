"""Tournament standings: W/D/L, points, rating, setter and solver strength, crosstable."""

from __future__ import annotations

import pytest

from duels.selectors.standings import tournament_standings

pytestmark = pytest.mark.django_db


def test_standings_count_results_and_strengths(make):
    a, b, c = make.player(name="ann"), make.player(name="bob"), make.player(name="cyd")
    tournament = make.tournament(players=[a, b, c])
    # ann beats bob (ann's environment 1.00, bob's 0.25), bob and cyd draw at 0.
    make.finished_duel(a=a, b=b, tournament=tournament)
    make.finished_duel(a=b, b=c, tournament=tournament, unhinted_a=(True, True),
                       hinted_a=(True, True), unhinted_b=(False, False), hinted_b=(False, False))
    standings = tournament_standings(tournament=tournament)
    rows = {row["player"].name: row for row in standings["rows"]}
    assert [row["player"].name for row in standings["rows"]][0] == "ann"
    assert (rows["ann"]["wins"], rows["ann"]["draws"], rows["ann"]["losses"]) == (1, 0, 0)
    assert (rows["bob"]["wins"], rows["bob"]["draws"], rows["bob"]["losses"]) == (0, 1, 1)
    assert rows["cyd"]["points"] == 0.5
    assert rows["ann"]["setter_strength"] == 1.0
    assert rows["bob"]["setter_strength"] == pytest.approx((0.25 + 0.0) / 2)
    # bob solved ann's environment unhinted 0/2; ann solved bob's 1/2; cyd solved bob's 2/2.
    assert rows["bob"]["solver_strength"] == 0.0 and rows["ann"]["solver_strength"] == 0.5
    assert rows["cyd"]["solver_strength"] == 1.0 and rows["cyd"]["solver_episodes"] == 2
    assert rows["ann"]["rating"] > rows["cyd"]["rating"]
    grid = {line["setter"].name: line["cells"] for line in standings["grid"]}
    order = [player.name for player in standings["players"]]
    assert grid["ann"][order.index("ann")] == "self"
    assert grid["ann"][order.index("bob")] == {"gain": 1.0, "n": 1}
    assert grid["ann"][order.index("cyd")] is None  # never met


def test_standings_of_an_empty_tournament(make):
    tournament = make.tournament(players=[make.player(), make.player()])
    standings = tournament_standings(tournament=tournament)
    assert all(row["played"] == 0 and row["rating"] is None for row in standings["rows"])
