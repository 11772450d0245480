"""`manage.py analytics` in plain text: unknown figures print as "—", never crash."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from duels.management.commands._text import analytics_lines, figure, interval

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("analytics", *args, stdout=out)
    return out.getvalue()


def test_two_player_one_duel_tournament_prints_with_unknown_intervals(make):
    a, b = make.player(name="alpha"), make.player(name="beta")
    tournament = make.tournament(players=[a, b], status="finished")
    make.finished_duel(a=a, b=b, tournament=tournament)

    text = run("--refresh")

    assert "ratings (Bradley-Terry" in text
    assert "alpha" in text and "beta" in text
    # One duel gives no bootstrap interval: the figure is unknown, and says so.
    assert "interval: not enough data" in text
    assert "None" not in text
    machine = json.loads(run("--json"))
    ratings = {row["player"]: row for row in machine["ratings"]}
    assert ratings["alpha"]["low"] is None


def test_no_duels_says_not_enough_data():
    text = run("--refresh")
    assert "not enough data: no finished duel yet" in text


def test_every_block_tolerates_null_figures():
    data = {
        "computed_at": "2026-01-01T00:00:00+00:00",
        "ratings": [{"player": "p", "rating": None, "low": None, "high": None, "rank": None,
                     "duels": 1}],
        "setters": [{"player": "p", "setter_score": None, "low": None, "high": None,
                     "hint_gain": None}],
        "solvers": [{"player": "p", "pass_rate": None, "low": None, "high": None}],
        "divergence": None, "transitivity": None,
        "environments": [{"uuid": "u", "author": "p", "hint_gain": None, "low": None,
                          "high": None, "flags": []}],
        "convergence": {"clusters": [], "p_value": None}, "transfer": None,
        "observe_uplift": [{"player": "p", "on": None, "off": None, "low": None, "high": None}],
        "scale": None, "irt": None,
        "findings": [
            {"id": "transitive", "claim": "c", "verdict": "not enough data",
             "figure": {"key": "zeta", "label": "ζ", "value": None, "n_of": "players"},
             "interval": None, "n": 0, "needs": "more duels"},
            {"id": "solver_not_setter", "claim": "c", "verdict": "supported",
             "figure": {"key": "p", "label": "P(top differs)", "value": 0.97, "n_of": "players"},
             "interval": {"low": None, "high": None, "method": "a probability"}, "n": 4,
             "needs": None},
        ],
    }
    text = "\n".join(analytics_lines(data))
    assert "None" not in text
    assert "scale: not enough data" in text
    assert "findings (the study's claims checked on these duels)" in text
    assert "  not enough data  c\n" in text
    assert "ζ — (interval: not enough data, n = 0); needs more duels" in text
    assert "  supported        c\n" in text
    assert "P(top differs) 0.97 (no interval: a probability, n = 4)" in text


def test_figure_and_interval():
    assert figure(None) == "—"
    assert figure(0.5) == "0.50"
    assert figure(3.0, "d") == "3"
    assert interval(0.1, None) == "interval: not enough data"
    assert interval(0.1, 0.25) == "[0.10, 0.25]"
