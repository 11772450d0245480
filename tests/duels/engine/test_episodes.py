"""The solver loop through a real sandbox, with the built-in players."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from duels.engine.duels import duel_create
from duels.engine.episodes import episode_record_step, episode_run
from duels.engine.leases import episode_claim
from duels.models import EndReason, Episode, Status, Step
from sandbox_runner import available_backends
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db

CRASHING_SOURCE = '''
class Environment:
    max_steps = 5

    def reset(self, seed):
        return "Type anything."

    def step(self, action):
        raise RuntimeError("boom")
'''


@pytest.fixture(autouse=True)
def sandbox_backend(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    # The quickest real sandbox to start keeps these tests short; all run the same guest.
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]


def _indices(episode: Episode) -> list[int]:
    return list(episode.trajectory.order_by("index").values_list("index", flat=True))


def test_an_episode_stores_contiguous_steps_from_the_reset(make):
    episode = make.episode(status=Status.PENDING, success=None)
    episode = episode_run(episode=episode)
    assert episode.status == Status.FINISHED
    assert episode.end_reason in {EndReason.DONE, EndReason.MAX_STEPS}
    indices = _indices(episode)
    assert indices == list(range(len(indices)))
    assert episode.steps == indices[-1] >= 1
    first = episode.trajectory.get(index=0)
    assert first.observation == "Say the number 0."
    last = episode.trajectory.order_by("-index").first()
    assert episode.success is (last.success and last.done)
    assert episode.sandbox_backend in available_backends()
    assert episode.lease_owner == "" and episode.lease_expires_at is None
    assert episode.input_tokens == sum(s.input_tokens for s in episode.trajectory.all())


def test_a_resumed_episode_replays_stored_actions_and_continues(make):
    environment = make.environment(source=make.TRIVIAL_SOURCE.replace("seed % 3", "seed % 3 + 7"))
    episode = make.episode(status=Status.PENDING, success=None, environment=environment, seed=1)
    assert episode_claim(episode_id=episode.pk, owner="dead-worker")
    episode_record_step(episode=episode, owner="dead-worker", index=0,
                        observation="Say the number 8.")
    episode_record_step(episode=episode, owner="dead-worker", index=1, observation="no",
                        reply="Guess.\nACTION: 3", action="3", input_tokens=7, output_tokens=2)
    kept = Step.objects.get(episode=episode, index=1)
    # The worker died: its lease ran out.
    Episode.objects.filter(pk=episode.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))

    episode = episode_run(episode=episode)

    assert episode.status == Status.FINISHED
    assert episode.resumes == 1
    indices = _indices(episode)
    assert indices == list(range(len(indices))) and len(indices) >= 3
    assert Step.objects.get(episode=episode, index=1).uuid == kept.uuid
    # The solver saw the stored conversation: its next turn follows the stored action.
    assert episode.input_tokens >= 7


def test_replay_that_disagrees_with_stored_steps_fails_the_episode(make):
    episode = make.episode(status=Status.PENDING, success=None)
    assert episode_claim(episode_id=episode.pk, owner="dead-worker")
    episode_record_step(episode=episode, owner="dead-worker", index=0,
                        observation="Something else entirely.")
    Episode.objects.filter(pk=episode.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    episode = episode_run(episode=episode)
    assert episode.status == Status.FAILED
    assert episode.end_reason == EndReason.ENV_ERROR
    assert "resumed" in episode.error


def test_environment_errors_end_the_episode_as_an_environment_fault(make):
    environment = make.environment(source=CRASHING_SOURCE)
    episode = episode_run(episode=make.episode(status=Status.PENDING, success=None,
                                               environment=environment))
    assert episode.status == Status.FAILED
    assert episode.end_reason == EndReason.ENV_ERROR
    assert episode.success is False  # the setter's fault: counted as not passed
    assert episode.infra_faults == 0
    assert "boom" in episode.error
    assert _indices(episode) == [0]


def test_a_misconfigured_player_ends_the_episode_as_an_infrastructure_fault_at_once(make):
    solver = make.player(params={"solver_skill": "telepathy"})
    episode = episode_run(episode=make.episode(status=Status.PENDING, success=None,
                                               solver=solver))
    # Waiting cannot fix a configuration error: no retries, and it is not a result.
    assert episode.status == Status.FAILED
    assert episode.end_reason == EndReason.INFRA_ERROR
    assert episode.success is None
    assert "solver_skill" in episode.error


def test_the_token_budget_ends_the_episode_as_a_failure(make, settings):
    settings.ENVDUELS_EPISODE_TOKEN_BUDGET = 1
    source = make.TRIVIAL_SOURCE.replace("seed % 3", "'never'")
    episode = episode_run(episode=make.episode(
        status=Status.PENDING, success=None, environment=make.environment(source=source)))
    assert (episode.status, episode.end_reason, episode.success) == (
        Status.FINISHED, EndReason.TOKEN_BUDGET, False)
    assert _indices(episode) == [0, 1]


def test_an_episode_of_a_cancelled_duel_stops_before_its_first_action(make):
    a, b = make.player(), make.player()
    duel = duel_create(a=a, b=b, attempts=1)
    duel.status = Status.CANCELLED
    duel.save()
    episode = episode_run(episode=make.episode(status=Status.PENDING, success=None, duel=duel,
                                               solver=b))
    assert episode.status == Status.CANCELLED
    assert episode.end_reason == EndReason.CANCELLED
    assert _indices(episode) == [0]


@pytest.mark.parametrize("capped", ["duel", "tournament"])
def test_a_spent_cost_cap_stops_the_episode_before_its_next_model_call(make, capped):
    from duels.engine.tournaments import tournament_create

    # A priced solver that never succeeds: only the cap can end the episode early.
    source = make.TRIVIAL_SOURCE.replace("seed % 3", "'never'")
    solver = make.player(price_in=500_000.0, price_out=500_000.0)
    setter = make.player()
    tournament = tournament_create(players=[setter, solver], rounds=1, attempts=1,
                                   cost_cap=0.01 if capped == "tournament" else None)
    duel = duel_create(a=setter, b=solver, attempts=1, tournament=tournament,
                       cost_cap=0.01 if capped == "duel" else None)
    duel.status = Status.RUNNING
    duel.save()
    episode = episode_run(episode=make.episode(
        status=Status.PENDING, success=None, duel=duel, solver=solver,
        environment=make.environment(source=source)))
    assert (episode.status, episode.end_reason) == (Status.CANCELLED, EndReason.COST_CAP)
    assert f"{capped} cost cap reached" in episode.error
    assert _indices(episode) == [0, 1]  # the first call spent the cap; no second one followed
