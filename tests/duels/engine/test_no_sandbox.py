"""A machine where no sandbox works: duels fail at once with the reason, never loop."""

from __future__ import annotations

import pytest

from duels.engine.duels import duel_create
from duels.engine.scheduler import duel_run
from duels.models import Episode, Player, Status
from duels.services.players import player_seed_builtin
from sandbox_runner import SandboxUnavailable

# Before the fix this looped forever on the authoring lease; the timeout turns that into a failure.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

REASON = "no sandbox backend works on this machine, so no environment code was run"


def test_a_duel_fails_with_the_reason_when_no_sandbox_works(monkeypatch, settings):
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0

    def no_sandbox(**kwargs):
        raise SandboxUnavailable(REASON)

    monkeypatch.setattr("duels.engine.validation.environment_validation_report", no_sandbox)
    player_seed_builtin()
    a, b = Player.objects.filter(builtin=True).order_by("name")[:2]
    duel = duel_run(duel=duel_create(a=a, b=b, attempts=1))
    assert duel.status == Status.FAILED
    assert REASON in duel.error
    assert not Episode.objects.filter(duel=duel).exclude(status=Status.CANCELLED).exists()
