"""A reply without a readable action never reaches the environment: the solver is reminded of
the format, the turn counts toward max_steps, and the step records the format error."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from duels.engine import episodes
from duels.engine.episodes import episode_record_step, episode_run
from duels.engine.leases import episode_claim
from duels.models import EndReason, Episode, Status
from duels.players.base import ChatPlayer, Completion
from sandbox_runner import available_backends
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db

# Counts every action it receives, so a test sees exactly what reached it.
COUNTING_SOURCE = '''
class Environment:
    max_steps = 4

    def reset(self, seed):
        self.received = 0
        return "Say open."

    def step(self, action):
        self.received += 1
        ok = action == "open"
        return {"observation": "received %d: %s" % (self.received, action),
                "done": ok, "success": ok}
'''


class Scripted(ChatPlayer):
    """Answers with the given replies in turn and keeps every chat it was sent."""

    def __init__(self, *replies: str) -> None:
        super().__init__(name="scripted", model="scripted")
        self.replies = list(replies)
        self.chats: list[list[dict]] = []

    def complete(self, messages, **options) -> Completion:
        self.chats.append(messages)
        return Completion(text=self.replies.pop(0), input_tokens=5, output_tokens=5)


@pytest.fixture(autouse=True)
def sandbox_backend(settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]


@pytest.fixture
def counting(make):
    environment = make.environment(source=COUNTING_SOURCE, max_steps=4)
    return make.episode(status=Status.PENDING, success=None, environment=environment)


def test_an_unreadable_reply_gets_a_reminder_and_never_reaches_the_environment(
        counting, monkeypatch):
    solver = Scripted("I think I should say open.", "Right.\nAction: open")
    monkeypatch.setattr(episodes, "player_client", lambda player: solver)

    episode = episode_run(episode=counting)

    assert episode.status == Status.FINISHED and episode.success is True
    reminder, answered = episode.trajectory.filter(index__gte=1).order_by("index")
    assert reminder.is_format_reminder and reminder.action == ""
    assert "no ACTION: line" in reminder.format_error
    assert reminder.observation.startswith("[EnvDuels format reminder]")
    assert "1 of 4 steps used" in reminder.observation
    assert reminder.reward is None and not reminder.done
    # The environment saw one action only: the readable one.
    assert answered.observation == "received 1: open" and answered.format_error == ""
    # The solver's second prompt ends with the reminder, after its own unreadable reply.
    assert solver.chats[1][-2] == {"role": "assistant", "content": "I think I should say open."}
    assert solver.chats[1][-1]["content"] == reminder.observation


def test_unreadable_replies_use_up_the_step_limit(counting, monkeypatch):
    monkeypatch.setattr(episodes, "player_client",
                        lambda player: Scripted(*["<think>ACTION: open</think>"] * 4))
    episode = episode_run(episode=counting)
    assert episode.end_reason == EndReason.MAX_STEPS and episode.success is False
    steps = episode.trajectory.filter(index__gte=1)
    assert steps.count() == 4 and all(step.is_format_reminder for step in steps)
    assert all("inside a reasoning section" in step.format_error for step in steps)


def test_a_resumed_episode_does_not_replay_reminders_into_the_environment(
        counting, monkeypatch):
    assert episode_claim(episode_id=counting.pk, owner="dead-worker")
    episode_record_step(episode=counting, owner="dead-worker", index=0, observation="Say open.")
    episode_record_step(episode=counting, owner="dead-worker", index=1,
                        observation="received 1: shut", reply="ACTION: shut", action="shut")
    episode_record_step(episode=counting, owner="dead-worker", index=2,
                        observation="[EnvDuels format reminder] ...", reply="Hmm.",
                        format_error="the reply has no ACTION: line")
    Episode.objects.filter(pk=counting.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    solver = Scripted("ACTION: open")
    monkeypatch.setattr(episodes, "player_client", lambda player: solver)

    episode = episode_run(episode=counting)

    assert episode.status == Status.FINISHED and episode.success is True
    # Replay sent "shut" only; the reminder's reply never went in, so "open" is the second.
    assert episode.trajectory.get(index=3).observation == "received 2: open"
    sent = [m["content"] for m in solver.chats[0] if m["role"] != "system"]
    assert sent == ["Say open.", "ACTION: shut", "received 1: shut", "Hmm.",
                    "[EnvDuels format reminder] ..."]


@pytest.mark.parametrize(("provider", "stop"), [("anthropic", "max_tokens"), ("openai", "length")])
def test_a_reasoning_only_reply_at_the_token_limit_is_that_steps_format_error(
        make, monkeypatch, provider, stop):
    """Through the real SDK and a loopback server: the model thought until its token limit and
    wrote no content. That turn is a format error and the episode goes on to its end; it is no
    infrastructure fault."""
    from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-loopback-test")
    with LoopbackServer() as server:
        server.script(reply("", thinking="Which word opens it? Perhaps... " * 30, stop=stop),
                      reply("ACTION: open"))
        solver = loopback_player(server, provider, params={"actions": "text"})
        solver.save()
        environment = make.environment(source=COUNTING_SOURCE, max_steps=4)
        episode = episode_run(episode=make.episode(status=Status.PENDING, success=None,
                                                   environment=environment, solver=solver))

    assert episode.status == Status.FINISHED and episode.success is True, episode.error
    assert episode.infra_faults == 0
    empty, answered = episode.trajectory.filter(index__gte=1).order_by("index")
    assert empty.is_format_reminder and empty.reply == ""
    assert empty.format_error == (f"the reply has no content: the model reached its token limit "
                                  f"({stop}) while reasoning, before writing an answer")
    assert empty.thinking.startswith("Which word opens it?")
    assert answered.observation == "received 1: open"
