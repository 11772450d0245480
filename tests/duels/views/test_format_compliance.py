"""Each solver's format-error rate, per condition, from one function: on its player page, on the
duel page and in `analytics --json`; format reminders are marked as such in the replay."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from duels.analytics.compliance import format_error_rates
from duels.analytics.data import ComplianceRecord
from duels.models import Condition, Step

pytestmark = pytest.mark.django_db

REMINDER = "[EnvDuels format reminder] Your reply could not be read: no ACTION: line."


def test_rates_are_counted_per_solver_and_condition():
    rows = format_error_rates([
        ComplianceRecord("b", False, 4, 1), ComplianceRecord("b", True, 2, 0),
        ComplianceRecord("a", True, 3, 3), ComplianceRecord("b", False, 4, 1),
    ])
    assert [row["player"] for row in rows] == ["a", "b"]
    a, b = rows
    assert a["unhinted"] == {"rate": None, "format_errors": 0, "replies": 0}
    assert a["hinted"] == {"rate": 1.0, "format_errors": 3, "replies": 3}
    assert b["unhinted"]["rate"] == 0.25 and b["hinted"]["rate"] == 0.0
    assert (b["rate"], b["format_errors"], b["replies"]) == (0.2, 2, 10)
    assert format_error_rates([]) == []


def _unreadable(duel, *, solver, condition):
    """Turn one stored reply of `solver` in `condition` into a format reminder."""
    step = Step.objects.filter(episode__duel=duel, episode__solver=solver,
                               episode__condition=condition, index=1).first()
    step.format_error, step.action, step.observation = "the reply has no ACTION: line", "", \
        REMINDER
    step.save()
    return step


@pytest.fixture
def duel(make):
    duel = make.finished_duel()  # each solver: 2 unhinted and 2 hinted replies
    _unreadable(duel, solver=duel.b, condition=Condition.UNHINTED)
    return duel


def test_the_player_page_shows_its_rates_as_solver(owner_client, duel):
    page = owner_client.get(f"/players/{duel.b.uuid}/").content.decode()
    assert "Format compliance" in page
    assert "unhinted format errors</dt><dd>50%</dd>" in page and "1 of 2 replies" in page
    assert "hinted format errors</dt><dd>0%</dd>" in page and "0 of 2 replies" in page


def test_the_duel_page_shows_each_solvers_rates(owner_client, duel):
    page = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    section = page[page.index('id="format-compliance"'):]
    assert f"{duel.b.name} as solver" in section and f"{duel.a.name} as solver" in section
    assert section.count("1 of 2 replies") == 1 and section.count("0 of 2 replies") == 3


def test_analytics_json_carries_the_same_rates(duel, capsys):
    call_command("analytics", "--refresh", "--json")
    rows = {row["player"]: row for row in json.loads(capsys.readouterr().out)["format_errors"]}
    assert rows[duel.b.name]["unhinted"] == {"rate": 0.5, "format_errors": 1, "replies": 2}
    assert rows[duel.b.name]["hinted"]["rate"] == 0.0
    assert rows[duel.a.name]["rate"] == 0.0


def test_the_replay_marks_a_format_reminder(owner_client, duel):
    step = Step.objects.get(episode__duel=duel, format_error__gt="")
    page = owner_client.get(f"/episodes/{step.episode.uuid}/").content.decode()
    assert "format reminder from EnvDuels, not the environment" in page
    assert "nothing reached the environment" in page
    assert REMINDER.replace("'", "&#x27;") in page


def test_the_compare_page_marks_a_format_reminder(owner_client, duel):
    step = Step.objects.get(episode__duel=duel, format_error__gt="")
    page = owner_client.get(f"/episodes/{step.episode.uuid}/compare/", follow=True)
    text = page.content.decode()
    assert page.status_code == 200
    assert text.count("format reminder from EnvDuels, not the environment") == 1
