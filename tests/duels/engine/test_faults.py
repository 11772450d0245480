"""Infrastructure faults are retried and resumed, never scored; environment faults are scored."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from duels.engine import authoring, episodes
from duels.engine.duels import duel_create
from duels.engine.episodes import episode_run
from duels.engine.faults import ENVIRONMENT, INFRASTRUCTURE, fault_kind, infra_backoff_seconds
from duels.engine.scheduler import duel_run
from duels.models import Duel, EndReason, Episode, Player, Status
from duels.players import PlayerError
from duels.services.players import player_seed_builtin
from sandbox_runner import (
    EnvCodeError,
    EnvCrashed,
    SandboxCrashed,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    SandboxUnavailable,
    available_backends,
)
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db


@pytest.fixture
def sandbox_backend(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 0


class FlakyClients:
    """Wraps `player_client` so the chosen calls (1-based, counted across all clients) fail
    the way a provider still failing after the player's own retries does."""

    def __init__(self, real, *, failing_calls: set[int]) -> None:
        self.real, self.failing_calls, self.calls = real, failing_calls, 0

    def __call__(self, player):
        client = self.real(player)
        flaky = self

        class Client:
            def complete(self, messages, **options):
                flaky.calls += 1
                if flaky.calls in flaky.failing_calls:
                    raise PlayerError("HTTP 503: overloaded (gave up after 4 tries)",
                                      status=503, retryable=True)
                return client.complete(messages, **options)

        return Client()


@pytest.mark.parametrize(("error", "kind"), [
    (EnvCodeError("ValueError: boom"), ENVIRONMENT),
    (SandboxTimeout("step exceeded the call time limit"), ENVIRONMENT),
    (SandboxMemoryExceeded("out of memory"), ENVIRONMENT),
    (SandboxOutputExceeded("observation too long"), ENVIRONMENT),
    (episodes.ReplayMismatch("step 2 differs"), ENVIRONMENT),
    (EnvCrashed("the environment's process was killed by SIGSEGV (status 75)"), ENVIRONMENT),
    (SandboxCrashed("the sandbox was killed from outside (status -9)"), INFRASTRUCTURE),
    (SandboxUnavailable("no Docker engine answers"), INFRASTRUCTURE),
    (PlayerError("HTTP 503 (gave up after 4 tries)", retryable=True), INFRASTRUCTURE),
    (OperationalError("server closed the connection unexpectedly"), INFRASTRUCTURE),
    (KeyError("a bug"), None),
])
def test_every_fault_has_one_kind(error, kind):
    assert fault_kind(error) == kind


def test_backoff_doubles_and_is_capped(settings):
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 10
    settings.ENVDUELS_INFRA_BACKOFF_MAX_SECONDS = 35
    assert [infra_backoff_seconds(faults=n) for n in (1, 2, 3, 4)] == [10, 20, 35, 35]


def test_a_provider_outage_mid_episode_hands_it_back_and_it_resumes_from_its_steps(
    make, sandbox_backend, monkeypatch
):
    source = make.TRIVIAL_SOURCE.replace("seed % 3", "'never'")  # the solver keeps guessing
    environment = make.environment(source=source.replace("max_steps = 5", "max_steps = 4"))
    episode = make.episode(status=Status.PENDING, success=None, environment=environment)
    flaky = FlakyClients(episodes.player_client, failing_calls={3})
    monkeypatch.setattr(episodes, "player_client", flaky)

    episode = episode_run(episode=episode)

    # Handed back, not ended: no owner, two steps kept, the fault counted and described.
    assert episode.status == Status.RUNNING and episode.lease_owner == ""
    assert episode.infra_faults == 1 and "503" in episode.error
    kept = list(episode.trajectory.order_by("index").values_list("index", "uuid"))
    assert [index for index, _ in kept] == [0, 1, 2]

    episode = episode_run(episode=episode)

    assert episode.status == Status.FINISHED and episode.end_reason == EndReason.MAX_STEPS
    assert episode.resumes == 1
    steps = list(episode.trajectory.order_by("index").values_list("index", "uuid"))
    assert steps[:3] == kept and [index for index, _ in steps] == list(range(len(steps)))


def test_out_of_tries_the_duel_fails_unscored_and_its_other_episodes_stop(
    make, sandbox_backend, settings, monkeypatch
):
    settings.ENVDUELS_INFRA_MAX_TRIES = 2
    a, b = make.player(), make.player()
    duel = duel_create(a=a, b=b, attempts=1)
    Duel.objects.filter(pk=duel.pk).update(status=Status.RUNNING)
    failing = make.episode(status=Status.PENDING, success=None, duel=duel, solver=b)
    waiting = make.episode(status=Status.PENDING, success=None, duel=duel, solver=a, seed=1)
    flaky = FlakyClients(episodes.player_client, failing_calls=set(range(1, 100)))
    monkeypatch.setattr(episodes, "player_client", flaky)

    episode_run(episode=failing)
    failing = episode_run(episode=failing)

    assert (failing.status, failing.end_reason, failing.success) == (
        Status.FAILED, EndReason.INFRA_ERROR, None)
    assert failing.infra_faults == 2
    duel.refresh_from_db()
    assert duel.status == Status.FAILED and duel.outcome is None
    assert "infrastructure fault, not a result" in duel.error and "2 tries" in duel.error
    assert duel.setter_score_a is None and duel.setter_score_b is None
    assert Episode.objects.get(pk=waiting.pk).status == Status.CANCELLED


@pytest.mark.django_db(transaction=True)
def test_a_setter_provider_outage_is_retried_not_forfeited(sandbox_backend, monkeypatch):
    player_seed_builtin()
    a = Player.objects.get(name="builtin-architect")
    b = Player.objects.get(name="builtin-rookie")
    # The first setter call of the duel fails as an outage would.
    flaky = FlakyClients(authoring.player_client, failing_calls={1})
    monkeypatch.setattr(authoring, "player_client", flaky)

    duel = duel_run(duel=duel_create(a=a, b=b, attempts=1))

    assert duel.status == Status.FINISHED and duel.outcome in {"a", "b", "draw"}
    assert duel.forfeit_a == "" and duel.forfeit_b == ""
    assert duel.infra_faults == 1


def test_a_sibling_mid_play_when_its_duel_fails_is_ended_with_a_reason(
    make, sandbox_backend, settings, monkeypatch
):
    """Finding 13: one episode runs out of tries while its sibling is mid-play under another
    worker; that worker dies before its next step. The sibling must not stay running."""
    from datetime import timedelta

    from django.utils import timezone

    from duels.engine.workers import stale_work_sweep, work_resume_stale

    settings.ENVDUELS_INFRA_MAX_TRIES = 1
    a, b = make.player(), make.player()
    duel = duel_create(a=a, b=b, attempts=1)
    Duel.objects.filter(pk=duel.pk).update(status=Status.RUNNING)
    failing = make.episode(status=Status.PENDING, success=None, duel=duel, solver=b)
    sibling = make.episode(status=Status.RUNNING, success=None, duel=duel, solver=a, seed=1,
                           steps=7, lease_owner="elsewhere:4242:dead",
                           lease_expires_at=timezone.now() + timedelta(seconds=30))
    monkeypatch.setattr(episodes, "player_client",
                        FlakyClients(episodes.player_client, failing_calls=set(range(1, 100))))

    failing = episode_run(episode=failing)

    assert failing.end_reason == EndReason.INFRA_ERROR
    assert Duel.objects.get(pk=duel.pk).status == Status.FAILED
    # Held by a live lease, the sibling is left to its worker to end at its next step ...
    assert Episode.objects.get(pk=sibling.pk).status == Status.RUNNING
    scheduled = []
    monkeypatch.setattr("duels.engine.workers.stale_sweep_schedule",
                        lambda: scheduled.append(True))
    stale_work_sweep()
    assert scheduled  # ... and the sweep keeps coming back while it is open.
    assert Episode.objects.get(pk=sibling.pk).status == Status.RUNNING

    # ... but that worker dies: its lease runs out, and the next worker's sweep ends it.
    Episode.objects.filter(pk=sibling.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    work_resume_stale()

    sibling.refresh_from_db()
    assert (sibling.status, sibling.end_reason, sibling.success) == (
        Status.CANCELLED, EndReason.CANCELLED, None)
    assert "duel failed or was cancelled" in sibling.error
    assert sibling.lease_owner == "" and sibling.finished_at is not None
