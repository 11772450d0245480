"""A slow model is never an environment's fault: the sandbox counts the environment's own time."""

from __future__ import annotations

import threading

import pytest

from duels.engine import authoring, episodes
from duels.engine.duels import duel_create
from duels.engine.episodes import episode_run
from duels.engine.scheduler import duel_run
from duels.models import EndReason, Episode, Status
from duels.players.base import Completion
from sandbox_runner import SandboxLimits
from sandbox_runner.session import Sandbox
from tests.helpers.clocks import JumpingClock

pytestmark = pytest.mark.timeout(300)

MODEL_SECONDS = 45.0

FOUR_STEPS_SOURCE = '''
class Environment:
    max_steps = 10

    def reset(self, seed):
        self.next = 1
        return "Count from 1 to 4, one number per action."

    def step(self, action):
        if action.strip() != str(self.next):
            return {"observation": "Wrong; say %d." % self.next, "done": False, "success": False}
        self.next += 1
        done = self.next == 5
        return {"observation": "Good." if not done else "Counted!", "done": done,
                "success": done, "reward": 1.0 if done else 0.0}

    def reference_solution(self, seed):
        return ["1", "2", "3", "4"]
'''

SETTER_ANSWER = ("TITLE: Count to four\nKIND: counting\n```python\n" + FOUR_STEPS_SOURCE
                 + "```\n```hint\nSay 1, 2, 3 and 4 in order.\n```\n")


class SlowCounter:
    """A solver that counts correctly, each reply taking `seconds` of model time."""

    def __init__(self, *, seconds: float, clock: JumpingClock | None = None) -> None:
        self.seconds = seconds
        self.clock = clock

    def complete(self, messages, **options) -> Completion:
        if self.clock is not None:
            self.clock.jump(self.seconds)  # the model's 45 s, on the sandbox's clock
        else:
            threading.Event().wait(self.seconds)  # really this slow
        replies = sum(message["role"] == "assistant" for message in messages)
        return Completion(text=f"Next number.\nACTION: {replies + 1}", input_tokens=20,
                          output_tokens=5, latency_ms=int(self.seconds * 1000))


class Setter:
    def complete(self, messages, **options) -> Completion:
        return Completion(text=SETTER_ANSWER, input_tokens=50, output_tokens=200)


@pytest.mark.django_db(transaction=True)
def test_a_duel_whose_solver_takes_45_s_per_reply_passes_every_episode(
        make, sandbox_backend, monkeypatch):
    clock = JumpingClock()
    monkeypatch.setattr(Sandbox, "clock", staticmethod(clock))
    monkeypatch.setattr(authoring, "player_client", lambda player: Setter())
    monkeypatch.setattr(episodes, "player_client",
                        lambda player: SlowCounter(seconds=MODEL_SECONDS, clock=clock))
    # Four replies of 45 s are far past the sandbox's 120 s for the environment's own time.
    assert SandboxLimits().episode_timeout < 4 * MODEL_SECONDS

    duel = duel_run(duel=duel_create(a=make.player(), b=make.player(), attempts=2))

    assert duel.status == Status.FINISHED, duel.error
    played = Episode.objects.filter(duel=duel)
    assert played.count() == 8
    for episode in played:
        assert (episode.status, episode.end_reason, episode.success) == (
            Status.FINISHED, EndReason.DONE, True), episode.error
        assert episode.steps == 4
        assert [s.latency_ms for s in episode.trajectory.filter(index__gte=1)] == [45000] * 4
    assert duel.p_unhinted_a == duel.p_hinted_a == 1.0


@pytest.mark.django_db
def test_a_really_slow_model_against_a_real_sandbox_with_small_limits(
        make, sandbox_backend, settings, monkeypatch):
    """End to end on the real clock: 0.6 s per reply, four replies, while the environment may
    spend only 1 s of its own time in the whole episode."""
    settings.ENVDUELS_SANDBOX_LIMITS = {"memory_bytes": 64 * 1024 * 1024, "call_timeout": 1.0,
                                        "episode_timeout": 1.0}
    monkeypatch.setattr(episodes, "player_client", lambda player: SlowCounter(seconds=0.6))
    environment = make.environment(source=FOUR_STEPS_SOURCE, max_steps=10)
    episode = make.episode(status=Status.PENDING, success=None, environment=environment)

    episode = episode_run(episode=episode)

    assert (episode.status, episode.end_reason, episode.success) == (
        Status.FINISHED, EndReason.DONE, True), episode.error
    assert episode.trajectory.count() == 5


@pytest.mark.django_db
def test_the_episode_time_budget_ends_it_as_a_budget_end(
        make, sandbox_backend, settings, monkeypatch):
    settings.ENVDUELS_EPISODE_TIME_BUDGET_SECONDS = 100
    monkeypatch.setattr(episodes, "player_client",
                        lambda player: SlowCounter(seconds=MODEL_SECONDS, clock=JumpingClock()))
    environment = make.environment(source=FOUR_STEPS_SOURCE, max_steps=10)
    episode = make.episode(status=Status.PENDING, success=None, environment=environment)

    episode = episode_run(episode=episode)

    assert (episode.status, episode.end_reason, episode.success) == (
        Status.FINISHED, EndReason.TIME_BUDGET, False)
    assert episode.steps == 3 and "135 s of model time; budget 100 s" in episode.error
