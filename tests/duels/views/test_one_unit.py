"""One way to write each figure: hint gain in percentage points on every page, chart and command
output (duels.words.units); heatmaps carry their numbers on a fixed colour scale; "Not enough data"
is written one way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from duels.analytics.charts import head_to_head_figures, hint_gain_figure
from duels.management.commands._text import analytics_lines
from duels.words.units import hint_gain_interval_text, hint_gain_text

ROOT = Path(__file__).resolve().parents[3]


def test_hint_gain_is_written_in_signed_whole_percentage_points():
    assert hint_gain_text(0.125) == "+13 pp"
    assert hint_gain_text(-0.25) == "\u221225 pp"
    assert hint_gain_text(0.0) == "0 pp"
    assert hint_gain_text(None) == "—"
    assert hint_gain_interval_text(-0.1, 0.4) == "[\u221210, +40] pp"
    assert hint_gain_interval_text(None, 0.4) == ""


@pytest.mark.django_db
def test_the_environments_list_environment_and_duel_pages_agree_on_the_unit(owner_client, make):
    duel = make.finished_duel(unhinted_a=(False, False), hinted_a=(True, False))
    environment = duel.env_a
    pages = {
        "list": owner_client.get("/environments/").content.decode(),
        "environment": owner_client.get(f"/environments/{environment.uuid}/").content.decode(),
        "duel": owner_client.get(f"/duels/{duel.uuid}/").content.decode(),
    }
    for name, page in pages.items():
        assert "+50 pp" in page, name
    row = re.search(rf'href="/environments/{environment.uuid}/".*?</tr>', pages["list"], re.S)
    assert row and "+50 pp" in row.group(0) and "+0.50" not in row.group(0)


def test_command_output_and_charts_write_hint_gain_the_same_way():
    data = {"computed_at": "now", "summary": {"players": 2}, "ratings": [
        {"rank": 1, "player": "a", "rating": 1000, "low": None, "high": None, "duels": 1}],
        "setters": [{"player": "a", "setter_score": 0.5, "low": None, "high": None,
                     "hint_gain": 0.5}],
        "environments": [{"uuid": "u", "author": "a", "hint_gain": -0.25, "low": -0.5,
                          "high": 0.1, "flags": []}]}
    text = "\n".join(analytics_lines(data))
    assert "hint gain +50 pp" in text and "hint gain \u221225 pp [\u221250, +10] pp" in text
    chart = hint_gain_figure([{"uuid": "u", "content_hash": "c" * 64, "title": "Maze",
                               "author": "a", "authors": ["a"], "hint_gain": 0.5, "low": 0.1,
                               "high": 0.8, "p_unhinted": 0.25, "p_hinted": 0.75, "flips": 1,
                               "episodes": 8, "flags": []}])
    trace = chart["figure"]["data"][0]
    assert trace["customdata"] == [["+50 pp", "[+10, +80] pp"]]
    assert chart["figure"]["layout"]["xaxis"]["ticktext"][-1] == "+100 pp"


def test_heatmaps_show_their_numbers_on_a_colour_scale_from_zero():
    order = ["a", "b", "c"]
    figures = head_to_head_figures(order, [[None, 1.0, 0.5], [0.0, None, 0.25],
                                           [0.5, 0.75, None]],
                                   [[0, 2, 3], [2, 0, 3], [3, 3, 0]])
    wins = figures["head-to-head-wins"]["figure"]["data"][0]
    duels = figures["head-to-head-duels"]["figure"]["data"][0]
    assert wins["texttemplate"] == "%{z:.2f}" and duels["texttemplate"] == "%{z:d}"
    assert (wins["zmin"], wins["zmax"], wins["zmid"]) == (0, 1.0, 0.5)
    assert (duels["zmin"], duels["zmax"], duels["zauto"]) == (0, 3, False)
    assert duels["colorbar"]["dtick"] == 1


@pytest.mark.django_db
def test_not_enough_data_is_written_one_way(owner_client, make):
    make.finished_duel()
    from duels.services.analytics import analytics_refresh

    analytics_refresh(resamples=10)
    page = owner_client.get("/analytics/").content.decode()
    assert "Not Enough Data" not in page
    verdicts = re.findall(r'<p class="verdict"><strong><a [^>]*>([^<]*)</a>', page)
    assert verdicts and set(verdicts) <= {"Not enough data", "Supported", "Contradicted"}
    css = (ROOT / "static" / "css" / "app.css").read_text()
    assert "capitalize" not in css
