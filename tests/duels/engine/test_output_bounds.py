"""Model output is bounded before it is stored: a 2 MB reply never becomes a 2 MB row."""

from __future__ import annotations

import pytest

from duels.bounds import (
    HINT_CHARS,
    REPLY_CHARS,
    SETTER_REPLY_CHARS,
    THINKING_CHARS,
    text_is_cut,
)
from duels.engine import authoring, episodes
from duels.engine.authoring import duel_author_side
from duels.engine.duels import duel_create
from duels.engine.episodes import episode_run
from duels.models import EndReason, ModelCall, Status
from duels.players.base import ChatPlayer, Completion
from sandbox_runner import available_backends
from tests.factories import TRIVIAL_SOURCE
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db

HUGE = 2_000_000


class Flood(ChatPlayer):
    """A model that answers every prompt with megabytes, ending in what the engine needs."""

    def __init__(self, *endings: str) -> None:
        super().__init__(name="flood", model="flood")
        self.endings = list(endings)

    def complete(self, messages, **options) -> Completion:
        ending = self.endings.pop(0) if len(self.endings) > 1 else self.endings[0]
        extra = {"thinking": "t" * HUGE} if "thinking" in Completion.__dataclass_fields__ else {}
        text = "x" * HUGE + "\n" + ending
        return Completion(text=text, input_tokens=1, output_tokens=1, **extra)


def test_a_flooding_solver_stores_bounded_steps(make, monkeypatch, settings):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    monkeypatch.setattr(episodes, "player_client", lambda player: Flood("ACTION: 1"))
    episode = episode_run(episode=make.episode(status=Status.PENDING, success=None))
    assert episode.end_reason == EndReason.MAX_STEPS
    steps = list(episode.trajectory.exclude(index=0))
    assert len(steps) == 5
    for step in steps:
        assert len(step.reply) <= REPLY_CHARS and text_is_cut(step.reply)
        assert step.reply.startswith("x") and step.reply.endswith("ACTION: 1")
        assert step.action == "1"
        assert len(getattr(step, "thinking", "")) <= THINKING_CHARS


def test_a_flooding_setter_stores_bounded_answers_and_hint(make, monkeypatch):
    too_long = "```python\n" + TRIVIAL_SOURCE + "# " + "s" * HUGE + "\n```\n```hint\nh\n```\n"
    flooded_hint = "```python\n" + TRIVIAL_SOURCE + "```\n```hint\n" + "h" * HUGE + "\n```\n"
    flood = Flood(too_long, flooded_hint)
    monkeypatch.setattr(authoring, "player_client", lambda player: flood)
    monkeypatch.setattr(authoring, "environment_validate", lambda environment: environment)
    monkeypatch.setattr(
        authoring, "environment_invalid_reason", lambda environment: "not validated here"
    )
    duel = duel_create(a=make.player(), b=make.player())
    side = duel_author_side(duel=duel, side="a", digests=[])
    assert side.environment.source.strip() == TRIVIAL_SOURCE.strip()
    assert len(side.hint.text) <= HINT_CHARS and text_is_cut(side.hint.text)
    calls = list(ModelCall.objects.filter(duel=duel).order_by("pk"))
    assert [call.role for call in calls] == ["setter", "repair"]
    for call in calls:
        assert len(call.reply) <= SETTER_REPLY_CHARS and text_is_cut(call.reply)
        assert all(len(m["content"]) <= SETTER_REPLY_CHARS for m in call.messages)
