"""`manage.py setup_local` prepares an installation once; run again it changes nothing."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from duels.models import Player, Study, Tournament

pytestmark = pytest.mark.django_db


def test_setup_local_prepares_once_and_then_does_nothing(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    first = io.StringIO()
    call_command("setup_local", stdout=first)
    assert "username: admin" in first.getvalue()
    assert Player.objects.filter(builtin=True).count() >= 2
    assert Tournament.objects.count() == 1
    # The demo study: the five built-in players, two environments each over two domains, two
    # benchmark seeds, one hardening round.
    study = Study.objects.get()
    assert study.players.count() == 5 and study.status == "running"
    assert (study.per_author, study.seeds, study.harden_rounds, study.domains) == (
        2, 2, 1, ["maze", "cipher"])
    assert study.slots.count() == 10
    players = Player.objects.count()

    again = io.StringIO()
    call_command("setup_local", stdout=again)
    assert "already exists" in again.getvalue() and "password" not in again.getvalue()
    assert "no demo tournament queued" in again.getvalue()
    assert "no demo study queued" in again.getvalue()
    assert (Player.objects.count(), Tournament.objects.count(), Study.objects.count()) == (
        players, 1, 1)
    assert get_user_model().objects.filter(is_superuser=True).count() == 1
