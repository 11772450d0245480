"""The panel ranking's "vs …" figure keeps one baseline, the first player evaluated here, as
more players are evaluated (it moved to the newest evaluation with each one)."""

from __future__ import annotations

import json

import pytest

from duels.panels.figures_cache import panel_figures_refresh
from tests.duels.panels.test_compare_grid import PLAYERS, three  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_baseline_of_vs_stays_the_first_evaluated_player(three, client,  # noqa: F811
                                                              owner):
    panel = three[0].panel
    panel_figures_refresh(panel=panel)
    client.force_login(owner)
    page = client.get(f"/panels/{panel.uuid}/").content.decode()
    assert f"“vs {PLAYERS[0]}” is each hint gain minus that of {PLAYERS[0]}, the first " \
           "player evaluated here" in page
    rows = json.loads(client.get(f"/panels/{panel.uuid}/tables/models.json").content)["rows"]
    by_model = {row["model"]: row for row in rows}
    assert by_model[PLAYERS[0]]["hint_gain_delta_vs_solver"] == pytest.approx(0.0)
    for name in PLAYERS[1:]:
        row = by_model[name]
        if row["hint_gain"] is not None and by_model[PLAYERS[0]]["hint_gain"] is not None:
            assert row["hint_gain_delta_vs_solver"] == pytest.approx(
                row["hint_gain"] - by_model[PLAYERS[0]]["hint_gain"])
