"""An environment that ends or crashes its own process mid-episode fails that episode as the
environment's fault, wherever it is played (a duel, a study, a panel evaluation): counted as
not passed with the exit shown, never retried, the model never called again. A sandbox killed
from outside is the infrastructure's: handed back, resumed, never scored."""

from __future__ import annotations

import os
import re
import signal

import pytest

from duels.engine import episodes
from duels.engine.duels import duel_create
from duels.engine.episodes import episode_run
from duels.models import Duel, EndReason, EnvironmentStatus, Evaluation, Status, Study
from duels.panels.create import panel_from_designs
from sandbox_runner import available_backends
from sandbox_runner.session import Sandbox
from tests.helpers.parts import need
from tests.helpers.self_kills import SELF_KILLS, self_killing_source

pytestmark = pytest.mark.django_db


@pytest.fixture
def sandbox_backend(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    settings.ENVDUELS_INFRA_BACKOFF_SECONDS = 0
    settings.ENVDUELS_SANDBOX_PREWARM = "0"


class CountedClients:
    """Wraps `player_client`, counting the model calls of every client it makes; `before_call`
    (given the call's number) runs before each."""

    def __init__(self, real, before_call=None) -> None:
        self.real, self.before_call, self.calls = real, before_call, 0

    def __call__(self, player):
        client = self.real(player)
        counted = self

        class Client:
            def complete(self, messages, **options):
                counted.calls += 1
                if counted.before_call is not None:
                    counted.before_call(counted.calls)
                return client.complete(messages, **options)

        return Client()


def _owned_episode(make, owner: str, environment):
    """A pending unhinted episode of `environment` belonging to a duel, a study or a panel's
    evaluation."""
    solver = make.player()
    fields = {"status": Status.PENDING, "success": None, "environment": environment,
              "solver": solver, "seed": 1000}
    if owner == "duel":
        fields["duel"] = duel_create(a=make.player(), b=solver, attempts=1)
    elif owner == "study":
        fields["study"] = Study.objects.create(name="field", seeds=1)
    else:
        panel, _ = panel_from_designs(hashes=[environment.content_hash], name="frozen")
        fields["evaluation"] = Evaluation.objects.create(panel=panel, player=solver)
    return make.episode(**fields)


@pytest.mark.parametrize("owner", ["duel", "study", "evaluation"])
@pytest.mark.parametrize("kill", sorted(SELF_KILLS))
def test_a_self_ending_environment_fails_its_episode_once(make, sandbox_backend, monkeypatch,
                                                          owner, kill):
    statement, shown = SELF_KILLS[kill]
    environment = make.environment(source=self_killing_source(statement, at_step=2),
                                   benchmark_seeds=[1000])
    episode = _owned_episode(make, owner, environment)
    counted = CountedClients(episodes.player_client)
    monkeypatch.setattr(episodes, "player_client", counted)

    episode = episode_run(episode=episode)

    assert (episode.status, episode.end_reason, episode.success) == (
        Status.FAILED, EndReason.ENV_ERROR, False)
    assert episode.infra_faults == 0 and episode.resumes == 0
    assert "EnvCrashed" in episode.error
    assert re.search(shown, episode.error)
    # One model call per action: the first answered, the second crashed the environment.
    assert counted.calls == 2
    assert list(episode.trajectory.order_by("index").values_list("index", flat=True)) == [0, 1]


def test_a_sandbox_killed_from_outside_mid_episode_is_resumed_not_scored(make, sandbox_backend,
                                                                          monkeypatch):
    environment = make.environment(source=self_killing_source("pass", max_steps=4))
    episode = _owned_episode(make, "duel", environment)
    opened: list[Sandbox] = []

    def kill_the_sandbox_before_call(number: int) -> None:
        if number == 2:  # after the first action's answer: the sandbox is mid-episode
            for sandbox in opened:
                process = sandbox.process
                if hasattr(process, "popen"):
                    os.killpg(process.popen.pid, signal.SIGKILL)
                    process.popen.wait(timeout=10)
                else:
                    process.container.kill()

    original_init = Sandbox.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(Sandbox, "__init__", recording_init)
    monkeypatch.setattr(episodes, "player_client",
                        CountedClients(episodes.player_client, kill_the_sandbox_before_call))

    episode = episode_run(episode=episode)

    # Handed back: not ended, not scored, the fault counted as the infrastructure's.
    assert episode.status == Status.RUNNING and episode.lease_owner == ""
    assert episode.infra_faults == 1 and "killed from outside" in episode.error
    assert episode.success is None

    monkeypatch.setattr(Sandbox, "__init__", original_init)
    episode = episode_run(episode=episode)
    assert episode.status == Status.FINISHED and episode.end_reason == EndReason.MAX_STEPS
    assert episode.resumes == 1


def test_an_environment_whose_plays_keep_ending_it_is_voided_with_the_evidence(
        make, sandbox_backend, client, staff):
    statement, _shown = SELF_KILLS["segfault"]
    environment = make.environment(source=self_killing_source(statement, at_step=2))
    solver = make.player()
    duel = duel_create(a=make.player(), b=solver, attempts=3)
    Duel.objects.filter(pk=duel.pk).update(env_a=environment)
    plays = [make.episode(status=Status.PENDING, success=None, environment=environment,
                          solver=solver, duel=duel, seed=seed) for seed in range(3)]

    for played, episode in enumerate(plays, start=1):
        episode = episode_run(episode=episode)
        assert episode.end_reason == EndReason.ENV_ERROR
        environment.refresh_from_db()
        assert (environment.status == EnvironmentStatus.INVALID) is (played == 3)

    evidence = environment.validation["after_play"]
    assert evidence["kind"] == "self_ending" and evidence["episode"] == str(plays[2].uuid)
    assert "ended its own process in 3 plays" in evidence["reason"]
    assert "SIGSEGV" in evidence["left"] and evidence["actions"] == [evidence["actions"][0]]
    duel.refresh_from_db()
    assert duel.void_a.startswith("voided after play: the environment ended its own process")
    client.force_login(staff)
    page = client.get(f"/environments/{environment.uuid}/").content.decode()
    assert "Voided after play" in page and "SIGSEGV" in page


@pytest.mark.parametrize("kill", sorted(SELF_KILLS))
def test_in_the_setter_seat_a_self_ending_play_is_not_passed(sandbox_backend, settings,
                                                            monkeypatch, kill):
    """The setter seat classifies a play as a duel's episode: a play whose environment ends its
    own process is not passed (never a SeatFault, never the infrastructure's)."""
    from duels.engine import setter_seat
    from duels.engine.setter_seat import SeatSpend, _play
    from duels.models import Player
    from duels.services.players import player_seed_builtin

    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0
    player_seed_builtin()
    statement, _shown = SELF_KILLS[kill]
    counted = CountedClients(setter_seat.player_client)
    monkeypatch.setattr(setter_seat, "player_client", counted)
    play = _play(source=self_killing_source(statement, at_step=2), max_steps=6,
                 solver=Player.objects.get(name="builtin-ace"), hint=None, seed=0,
                 spend=SeatSpend())
    assert (play.passed, play.end_reason) == (False, EndReason.ENV_ERROR)
    assert counted.calls == 2  # the answered action and the one that ended it; no retry
