"""An episode's question to its duel before each model call: one read for all the duel's
episodes in a process for a quarter second, forgotten at once when this process spends or ends
the duel (duels/engine/duel_state.py)."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from duels.engine import duel_state
from duels.engine.authoring import duel_charge
from duels.engine.duel_state import duel_state_read
from duels.engine.duels import duel_cancel
from duels.models import Duel, Status, Tournament

pytestmark = pytest.mark.django_db


def _duel(make, **fields) -> Duel:
    duel = make.finished_duel()
    tournament = make.tournament(cost_cap=1.0)
    Duel.objects.filter(pk=duel.pk).update(status=Status.RUNNING, tournament=tournament,
                                           **fields)
    return Duel.objects.get(pk=duel.pk)


def test_the_episodes_of_a_duel_share_one_read(make):
    duel = _duel(make)
    with CaptureQueriesContext(connection) as queries:
        states = [duel_state_read(duel_id=duel.pk) for _ in range(16)]
    assert len(queries) == 1
    assert states[0]["status"] == Status.RUNNING and states[0]["tournament__cost_cap"] == 1.0
    # Each asker gets its own copy: one episode's changes never reach another's.
    states[0]["status"] = "changed"
    assert duel_state_read(duel_id=duel.pk)["status"] == Status.RUNNING


def test_spending_or_ending_in_this_process_is_seen_at_the_next_question(make):
    duel = _duel(make)
    other = Duel.objects.get(pk=_duel(make).pk)
    Duel.objects.filter(pk=other.pk).update(tournament=duel.tournament)
    assert duel_state_read(duel_id=duel.pk)["cost"] == 0
    assert duel_state_read(duel_id=other.pk)["tournament__cost"] == 0
    duel_charge(duel=duel, cost=0.25)
    assert duel_state_read(duel_id=duel.pk)["cost"] == 0.25
    # The tournament's spend is every duel's: the other duel's read is forgotten too.
    assert duel_state_read(duel_id=other.pk)["tournament__cost"] == 0.25
    duel_cancel(duel=duel)
    assert duel_state_read(duel_id=duel.pk)["status"] == Status.CANCELLED


def test_another_process_cancelling_is_seen_within_a_quarter_second(make):
    duel = _duel(make)
    assert duel_state_read(duel_id=duel.pk)["status"] == Status.RUNNING
    # Another process's cancel: a plain UPDATE this process is not told of.
    Duel.objects.filter(pk=duel.pk).update(status=Status.CANCELLED)
    Tournament.objects.filter(pk=duel.tournament_id).update(cost=2.0)
    time.sleep(duel_state.FRESH_SECONDS)
    state = duel_state_read(duel_id=duel.pk)
    assert state["status"] == Status.CANCELLED and state["tournament__cost"] == 2.0


def test_a_read_that_raced_a_forget_is_not_kept(make, monkeypatch):
    """A spend stored while the read's query ran may be missing from what it saw: that read
    answers its own asker but is not shared."""
    duel = _duel(make)

    class RacingManager:
        def filter(self, **lookups):
            duel_state.duel_state_forget(duel_id=duel.pk)  # a spend lands as the query runs
            return Duel.objects.filter(**lookups)

    monkeypatch.setattr(duel_state, "Duel", type("RacingDuel", (), {"objects": RacingManager()}))
    assert duel_state_read(duel_id=duel.pk)["status"] == Status.RUNNING
    assert duel.pk not in duel_state._reads


def test_a_duel_that_is_gone_reads_as_none(make):
    assert duel_state_read(duel_id=10**9) is None
