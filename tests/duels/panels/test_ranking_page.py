"""The panel page's ranking reads top to bottom as its first "#" column (canonical solve), and
its "vs …" column keeps one baseline, the first player evaluated here, as more are evaluated."""

from __future__ import annotations

import re

import pytest

from duels.panels.figures_cache import panel_figures_refresh
from tests.duels.panels.test_compare_grid import PLAYERS, three  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_first_rank_column_follows_the_rows_and_the_baseline_stays(three, client,  # noqa: F811
                                                                       owner):
    panel = three[0].panel
    panel_figures_refresh(panel=panel)
    client.force_login(owner)
    page = client.get(f"/panels/{panel.uuid}/").content.decode()
    table = page.split('<section class="card" id="panel-ranking">')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>(.*?)</tr>", table, re.S)
    assert len(rows) == 3 + 3  # the three imported models and the three evaluated here
    ranks = [int(re.findall(r'<td class="num">(\d+|—)</td>', row)[0]) for row in rows]
    assert ranks == sorted(ranks) and ranks[0] == 1
    assert f"vs {PLAYERS[0]}" in table and "the first player evaluated here" in page
