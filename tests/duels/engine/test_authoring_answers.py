"""Authoring with answers in real models' styles: the prompt, the repair, the stored side."""

from __future__ import annotations

import pytest

from duels.engine import authoring
from duels.engine.duels import duel_create
from duels.engine.validation import UNTITLED_WARNING
from duels.models import EnvironmentStatus, ModelCall
from duels.players import prompts
from duels.players.base import Completion
from sandbox_runner.versions import sandbox_python_version
from tests.duels.players.test_setter_corpus import answer_text

pytestmark = [pytest.mark.timeout(120), pytest.mark.django_db]


def scripted_setter(monkeypatch, *answers: str) -> list[list[dict]]:
    """Make every setter answer `answers` in turn; return the messages each call was sent."""
    sent: list[list[dict]] = []

    class Setter:
        def complete(self, messages, **options):
            sent.append(messages)
            return Completion(text=answers[len(sent) - 1], input_tokens=1, output_tokens=1)

    monkeypatch.setattr(authoring, "player_client", lambda player: Setter())
    return sent


def test_a_missing_hint_gets_a_repair_that_says_what_was_found(make, sandbox_backend,
                                                               monkeypatch):
    sent = scripted_setter(monkeypatch, answer_text("missing_hint.md"),
                           answer_text("gemini_crlf.md"))
    duel = duel_create(a=make.player(), b=make.player(), attempts=1)

    side = authoring.duel_author_side(duel=duel, side="a", digests=[])

    assert side.forfeit == "" and side.environment.status == EnvironmentStatus.VALID
    assert side.environment.title == "Stepping Stones" and "\r" not in side.environment.source
    version = sandbox_python_version(backend=sandbox_backend)
    assert f"Write a single module for Python {version}, standard library only" in (
        sent[0][0]["content"])
    repair = sent[1][-1]["content"]
    assert repair.startswith(f"{prompts.REPAIR_LINE} Found a ```python block and no hint: no "
                             "```hint block, no ```json block with a \"hint\" key and no Hint: "
                             "section.")
    calls = ModelCall.objects.filter(duel=duel).order_by("id")
    assert list(calls.values_list("role", flat=True)) == [ModelCall.Role.SETTER,
                                                         ModelCall.Role.REPAIR]
    # The repaired answer is the one the environment came from; the malformed one became none.
    assert [call.environment for call in calls] == [None, side.environment]


def test_a_missing_title_is_named_in_the_validation_report(make, sandbox_backend, monkeypatch):
    scripted_setter(monkeypatch, answer_text("missing_title.md"))
    duel = duel_create(a=make.player(), b=make.player(), attempts=1)

    side = authoring.duel_author_side(duel=duel, side="a", digests=[])

    assert side.forfeit == ""
    assert side.environment.title == "Untitled environment"
    assert side.environment.validation["warnings"] == [UNTITLED_WARNING]


def test_two_modules_twice_forfeit_with_both_named(make, sandbox_backend, monkeypatch):
    two = answer_text("two_modules.md")
    scripted_setter(monkeypatch, two, two)
    duel = duel_create(a=make.player(), b=make.player(), attempts=1)

    side = authoring.duel_author_side(duel=duel, side="a", digests=[])

    assert side.environment is None
    assert not ModelCall.objects.filter(environment__isnull=False).exists()
    assert side.forfeit == (
        "malformed answer after one repair request: Found two candidate modules: the ```python "
        "block at line 6 and the ```python block at line 19 both define class Environment. Send "
        "exactly one module, in one ```python fenced block.")
