"""A published copy's figures equal the site's at the moment of publishing: the same resample
count (one number), the same seed, the same functions."""

from __future__ import annotations

import re

import pytest

from duels.analytics.bootstrap import BOOTSTRAP_RESAMPLES
from duels.publishing import site_export
from duels.selectors.site_summary import site_figures
from duels.services.analytics import analytics_refresh

pytestmark = pytest.mark.django_db
SHARED = ("ratings", "setters", "solvers", "divergence", "transitivity", "findings",
          "environments")


def _leaderboard_rows(html: str) -> list[str]:
    table = re.search(r"<table class=\"table\">.*?</table>", html, re.S).group(0)
    return [re.sub(r"\s+", " ", row) for row in re.findall(r"<tr><td>.*?</tr>", table, re.S)]


def test_a_copy_of_every_tournament_shows_the_site_s_figures_and_ranks(make, owner_client,
                                                                      tmp_path):
    players = [make.player(name=name) for name in ("ada", "bob", "cy", "dee")]
    tournament = make.tournament(players=players)
    duels = []
    for round_index in range(2):  # two rounds: six duels each, enough for a rank
        for i, a in enumerate(players):
            for j, b in enumerate(players[i + 1:], start=i + 1):
                duels.append(make.finished_duel(
                    a=a, b=b, tournament=tournament, unhinted_a=(i % 2 == 0, False),
                    hinted_a=(True, (j + round_index) % 2 == 0),
                    unhinted_b=(True, j % 3 == 0), hinted_b=(True, i != 1)))
    snapshot = analytics_refresh().data
    assert snapshot["summary"]["resamples"] == BOOTSTRAP_RESAMPLES

    published = site_figures(duel_uuids={str(duel.uuid) for duel in duels})

    assert published["summary"]["resamples"] == BOOTSTRAP_RESAMPLES
    for key in SHARED:
        assert published[key] == snapshot[key], key
    out = tmp_path / "site"
    site_export(tournament_uuids=[tournament.uuid], out=out)
    index = (out / "index.html").read_text()
    dashboard = owner_client.get("/").content.decode()
    copy_rows = _leaderboard_rows(index[index.index('id="site-leaderboard"'):])
    site_rows = _leaderboard_rows(dashboard[dashboard.index("Leaderboard"):])
    assert copy_rows and copy_rows == site_rows
