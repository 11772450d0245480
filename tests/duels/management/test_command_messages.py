"""Command messages that do not mislead: progress is not an error, a no-op cancel says so."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from duels.management.commands import tournament as tournament_command
from duels.management.commands.duel import _human
from duels.models import Status
from sandbox_runner import available_backends
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db


@pytest.fixture
def sandbox(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
def test_tournament_wait_prints_progress_on_stdout_not_as_an_error(make, sandbox, monkeypatch):
    monkeypatch.setattr(tournament_command, "PICKUP_SECONDS", 0.2)
    make.player(name="alpha", params={"setter_style": "safe", "solver_skill": "greedy",
                                      "seed": 1})
    make.player(name="beta", params={"setter_style": "safe", "solver_skill": "greedy",
                                     "seed": 2})
    out, err = StringIO(), StringIO()
    call_command("tournament", "--players", "alpha,beta", "--attempts", "1", "--wait",
                 stdout=out, stderr=err)
    text = out.getvalue()
    assert "1/1 duels" in text
    assert "running it here" in text
    # The command the docs teach: a bare db_worker serves one queue and sends no heartbeat.
    assert "`python manage.py worker`" in text and "db_worker" not in text
    assert text.rstrip().endswith("finished")
    assert err.getvalue() == ""


def test_cancel_of_a_finished_duel_exits_non_zero_and_cancels_nothing(make):
    duel = make.finished_duel()
    with pytest.raises(CommandError, match=r"already ended \(finished\); nothing was cancelled"):
        call_command("cancel", str(duel.uuid), stdout=StringIO())
    duel.refresh_from_db()
    assert duel.status == Status.FINISHED


def test_cancel_of_a_finished_tournament_says_nothing_was_cancelled(make):
    tournament = make.tournament(status="finished")
    with pytest.raises(CommandError, match="nothing was cancelled"):
        call_command("cancel", str(tournament.uuid), stdout=StringIO())


def test_duel_text_of_an_unfinished_duel_shows_no_none():
    side = {"player": "alpha", "environment": None, "valid": False, "forfeit_reason": None,
            "p_unhinted": None, "p_hinted": None, "hint_gain": None, "setter_score": None,
            "flips": None}
    text = _human({"duel": "u", "outcome": None, "a": side, "b": {**side, "player": "beta"}},
                  status="failed")
    assert "None" not in text
    assert "outcome: none (the duel did not finish)" in text
    assert "p_unhinted —, p_hinted —, hint gain —, setter score —, flips —" in text
