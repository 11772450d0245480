"""A setter's repair request says what was actually seen, through a real SDK and a loopback
server: an answer the model gave only as its reasoning, and an answer in a box wrapper."""

from __future__ import annotations

import pytest

from duels.engine import authoring
from duels.models import Duel, ModelCall
from tests import factories
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "system", "content": "You write environments."},
            {"role": "user", "content": "Write one."}]
ANSWER = ("TITLE: Lamp Room\nKIND: lights\n\n```python\nclass Environment:\n    max_steps = 5\n"
          "```\n\n```hint\nPress twice.\n```")


def _answer_of(server: LoopbackServer, provider: str) -> authoring.SetterReply:
    setter = loopback_player(server, provider)
    setter.save()
    duel = Duel.objects.create(a=setter, b=factories.player(), tournament=factories.tournament())
    return authoring.setter_answer(ledger=authoring.duel_ledger(duel=duel), player=setter,
                                   messages=MESSAGES)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_answer_given_only_as_reasoning_is_told_so(monkeypatch, provider):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-loopback-test")
    with LoopbackServer() as server:
        server.script(reply("", thinking=ANSWER), reply(ANSWER))
        result = _answer_of(server, provider)
    assert result.answer is not None and result.answer.title == "Lamp Room"
    repair = ModelCall.objects.get(role=ModelCall.Role.REPAIR).messages[-1]["content"]
    assert ("The answer is empty: the model returned only reasoning, apart from the reply, which "
            "is not read; the reasoning holds a ```python block at line 4") in repair


def test_an_answer_in_a_box_wrapper_needs_no_repair(monkeypatch):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-loopback-test")
    with LoopbackServer() as server:
        server.script(reply(f"<|begin_of_box|>{ANSWER}<|end_of_box|>"))
        result = _answer_of(server, "openai")
    assert result.answer is not None and result.answer.hint == "Press twice."
    assert not ModelCall.objects.filter(role=ModelCall.Role.REPAIR).exists()
