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
    monkeypatch.setattr("duels.engine.scheduler.available_backends", lambda: [])
    player_seed_builtin()
    a, b = Player.objects.filter(builtin=True).order_by("name")[:2]
    duel = duel_run(duel=duel_create(a=a, b=b, attempts=1))
    assert duel.status == Status.FAILED
    assert REASON in duel.error
    assert not Episode.objects.filter(duel=duel).exclude(status=Status.CANCELLED).exists()


def test_a_sandbox_backend_gone_for_a_while_is_retried_then_fails_unscored(monkeypatch, settings):
    # Backends exist here, but starting one keeps failing (a Docker engine restarting): that is
    # an infrastructure fault, retried after a backoff and, out of tries, never a forfeit.
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 0
    settings.ENVDUELS_INFRA_MAX_TRIES = 2
    calls = []

    def engine_gone(**kwargs):
        calls.append(1)
        raise SandboxUnavailable("could not start a Docker sandbox: connection refused")

    monkeypatch.setattr("duels.engine.validation.environment_validation_report", engine_gone)
    monkeypatch.setattr("duels.engine.scheduler.available_backends", lambda: ["docker"])
    player_seed_builtin()
    a, b = Player.objects.filter(builtin=True).order_by("name")[:2]
    duel = duel_run(duel=duel_create(a=a, b=b, attempts=1))
    assert len(calls) == 2 * 2  # both sides validate on each of the two tries
    assert duel.status == Status.FAILED and duel.infra_faults == 2
    assert "infrastructure fault, not a result" in duel.error
    assert duel.forfeit_a == duel.forfeit_b == "" and duel.outcome is None
