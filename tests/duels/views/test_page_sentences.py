"""Every sentence and figure on a page says what its numbers say: the cancelled duel page, the
duels filter seen from a player, CSV cells, one figure shown twice on the analytics page."""

from __future__ import annotations

import csv
import io

import pytest

from duels.models import AnalyticsSnapshot, Duel, Episode, Status
from duels.views.analytics import csv_cell

pytestmark = pytest.mark.django_db


def test_a_cancelled_duel_says_so_and_counts_only_runs_that_ran(owner_client, make):
    duel = make.finished_duel(attempts=3, unhinted_a=(False, False, False),
                              hinted_a=(True, False, False), unhinted_b=(True, False, False),
                              hinted_b=(True, False, False))
    # Cancelled midway: seeds 1 and 2 never ran, and nothing is scored.
    Episode.objects.filter(duel=duel, seed__gte=1).update(
        status=Status.CANCELLED, success=None)
    Duel.objects.filter(pk=duel.pk).update(
        status=Status.CANCELLED, outcome=None, error="cancelled", p_unhinted_a=None,
        p_hinted_a=None, setter_score_a=None, flips_a=None, p_unhinted_b=None,
        p_hinted_b=None, setter_score_b=None, flips_b=None)
    page = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    assert 'id="duel-cancelled"' in page and "this duel has no result" in page
    assert "Duel error" not in page and "Not scored yet" not in page
    assert page.count("The duel was cancelled before this side was scored") == 2
    # One seed ran in each condition on each side: 0/1 and 1/1, never out of 3.
    assert "0/1 seeds" in page and "1/1 seeds" in page and "/3 seeds" not in page


def test_the_duels_filter_reads_outcomes_from_the_chosen_player(owner_client, make):
    cautious, ace = make.player(name="cautious"), make.player(name="ace")
    won_as_b = make.finished_duel(a=ace, b=cautious, unhinted_a=(True, True),
                                  hinted_a=(True, True), unhinted_b=(False, False),
                                  hinted_b=(True, True))
    lost_as_a = make.finished_duel(a=cautious, b=ace, unhinted_a=(True, True),
                                   hinted_a=(True, True), unhinted_b=(False, False),
                                   hinted_b=(True, True))
    assert (won_as_b.outcome, lost_as_a.outcome) == ("b", "b")

    def listed(outcome: str) -> set[str]:
        page = owner_client.get(
            "/duels/", {"player": str(cautious.uuid), "outcome": outcome}).content.decode()
        return {str(duel.uuid) for duel in (won_as_b, lost_as_a) if str(duel.uuid) in page}

    assert listed("won") == {str(won_as_b.uuid)}
    assert listed("lost") == {str(lost_as_a.uuid)}
    assert listed("draw") == set()
    page = owner_client.get("/duels/", {"player": str(cautious.uuid)}).content.decode()
    assert "chosen player won" in page and "A (first player) wins" in page


def test_player_won_without_a_player_is_a_clear_400(owner_client):
    response = owner_client.get("/duels/", {"outcome": "won"})
    assert response.status_code == 400
    assert "needs a player: choose one." in response.content.decode()


@pytest.mark.parametrize(("cell", "written"), [
    (None, ""), ("", ""), ("plain", "plain"), (0.5, 0.5), (-0.25, -0.25),
    ("=1+1", "'=1+1"), ("+SUM(A1)", "'+SUM(A1)"), ("-2", "'-2"), ("@cmd", "'@cmd"),
    ("\tx", "'\tx"),
])
def test_csv_cells_are_escaped_only_when_they_start_like_a_formula(cell, written):
    assert csv_cell(cell) == written


def test_empty_cells_download_empty(make, owner_client):
    from duels.services.analytics import analytics_refresh

    make.finished_duel()
    analytics_refresh()
    rows = list(csv.reader(io.StringIO(owner_client.get("/analytics/hint-gain.csv")
                                       .content.decode())))
    assert rows[1:] and all(cell != "'" for row in rows for cell in row)


def test_a_figure_shown_twice_is_written_the_same_way(make, owner_client):
    from duels.services.analytics import analytics_refresh

    make.finished_duel()
    snapshot = analytics_refresh()
    data = snapshot.data
    # A probability whose two roundings disagree: half-up gives 0.83, the float itself 0.82.
    data["irt"]["divergence"] = {"kendall_tau": 0.1, "low": -0.5, "high": 0.7,
                                 "p_top_differs": 0.825, "players": 3}
    for finding in data["findings"]:
        if finding["id"] == "solver_not_setter":
            finding["figure"]["value"] = 0.825
    AnalyticsSnapshot.objects.filter(pk=snapshot.pk).update(data=data)
    page = owner_client.get("/analytics/").content.decode()
    shown = page.split('id="glance-solver_not_setter"')[1].split("<strong>")[1][:4]
    card = page.split('id="finding-solver_not_setter"')[1].split("<strong>")[2][:4]
    assert shown == card == "0.82"


