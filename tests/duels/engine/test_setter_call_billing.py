"""A setter call is stored together with its charge: when the charge cannot be written (the
database restarted, the worker died) no stored call is left that its duel never paid for.
Found by the soak run (benchmarks/soak.py): a PostgreSQL restart between the two writes."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from benchmarks.soak_parts.invariants import billing_once
from duels.engine import authoring
from duels.models import Duel, ModelCall
from tests import factories

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "system", "content": "You write environments."},
            {"role": "user", "content": "Write one."}]


def _duel():
    a = factories.player(price_in=3.0, price_out=15.0)
    return Duel.objects.create(a=a, b=factories.player(), tournament=factories.tournament())


def test_a_paid_setter_call_is_stored_and_charged():
    duel = _duel()
    authoring._setter_call(ledger=authoring.duel_ledger(duel=duel), player=duel.a,
                           role=ModelCall.Role.SETTER, messages=MESSAGES)
    call = ModelCall.objects.get()
    duel.refresh_from_db()
    assert call.cost > 0 and duel.cost == pytest.approx(call.cost)
    assert billing_once().held


def test_a_charge_that_fails_leaves_no_unpaid_call(monkeypatch):
    duel = _duel()

    def database_gone(**_):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(authoring, "duel_charge", database_gone)
    with pytest.raises(OperationalError):
        authoring._setter_call(ledger=authoring.duel_ledger(duel=duel), player=duel.a,
                               role=ModelCall.Role.SETTER, messages=MESSAGES)
    assert not ModelCall.objects.exists()
    assert billing_once().held
