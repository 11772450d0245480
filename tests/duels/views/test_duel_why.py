"""The duel page explains its result: rates with intervals, the formula with the numbers, the
flip seeds linked to their comparisons, the outcome rule applied; metric labels link to the
glossary, which defines every one of them."""

from __future__ import annotations

import re

import pytest

from duels.templatetags.duels_format import gain, gain_range, pct_range
from duels.words.glossary import GLOSSARY

pytestmark = pytest.mark.django_db


def test_number_format_pass_rates_percent_gain_in_signed_points():
    assert gain(0.25) == "+25 pp" and gain(-0.1) == "\u221210 pp" and gain(0.0) == "0 pp"
    assert gain(None) == "—"
    assert pct_range(0.125, 0.5) == "[12%, 50%]" and pct_range(None, 0.5) == ""
    assert gain_range(-0.1, 0.4) == "[\u221210, +40] pp"


def test_duel_page_explains_a_win(owner_client, make):
    duel = make.finished_duel()
    page = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    assert "s = p_h · (1 − p_u) = 1.00 · (1 − 0.00) = 1.00" in page
    assert "s = p_h · (1 − p_u) = 0.50 · (1 − 0.50) = 0.25" in page
    assert (
        f"{duel.a.name}&#x27;s environment scored 1.00 and {duel.b.name}&#x27;s 0.25: "
        f"the higher setter score wins, so {duel.a.name} wins." in page
    )
    assert "+100 pp" in page and ">0 pp<" in page
    assert "2/2 seeds · [34%, 100%]" in page  # Wilson interval of 2 out of 2
    flips = duel.episodes.filter(environment=duel.env_a).order_by("seed", "condition")
    for seed in (0, 1):
        hinted, unhinted = [e for e in flips if e.seed == seed]
        assert f"?a={unhinted.uuid}&amp;b={hinted.uuid}\">seed {seed}</a>" in page
    assert "Needed and sufficient" in page


def test_duel_page_says_why_a_draw_scores_zero(owner_client, make):
    duel = make.finished_duel(
        unhinted_a=(True, True), hinted_a=(True, True),
        unhinted_b=(False, False), hinted_b=(False, False),
    )
    page = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    assert "equal setter scores make a draw" in page
    assert "the environment is too easy, so it scores 0" in page
    assert "failed every seed even with the hint" in page
    assert "Flipped by the hint" not in page


def test_every_metric_link_on_the_duel_page_is_defined(owner_client, client, make):
    duel = make.finished_duel()
    page = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    linked = set(re.findall(r'href="/glossary/#([a-z_]+)"', page))
    assert {"p_unhinted", "p_hinted", "hint_gain", "setter_score", "flips", "outcome"} <= linked
    glossary = client.get("/glossary/").content.decode()
    for term in GLOSSARY:
        assert f'id="{term.key}"' in glossary
    assert linked <= {term.key for term in GLOSSARY}
