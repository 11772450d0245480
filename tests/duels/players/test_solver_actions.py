"""Reading a solver's action: the kept corpus of reply styles, the tool calls, the protocol."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from duels.models import Player
from duels.players.actions import (
    MAX_ACTION_CHARS,
    ParsedAction,
    action_clean,
    action_from_text,
    action_from_tool_calls,
    action_protocol,
    action_read,
    format_reminder,
)
from duels.players.base import Completion, PlayerError

CORPUS = Path(__file__).parent / "corpus" / "solver"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())


def test_the_corpus_has_every_style_the_reader_promises():
    assert len(EXPECTED) >= 15
    assert sorted(EXPECTED) == sorted(p.name for p in CORPUS.glob("*.txt"))
    assert b"\r\n" in (CORPUS / "16-crlf.txt").read_bytes()  # kept byte for byte
    assert sum("format_error" in want for want in EXPECTED.values()) >= 3


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_corpus_reply_reads_as_a_person_would(name):
    reply = (CORPUS / name).read_bytes().decode()
    parsed = action_from_text(reply)
    want = EXPECTED[name]
    if want.get("format_error"):
        assert parsed.action == "" and parsed.format_error
    else:
        assert parsed == ParsedAction(action=want["action"])


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I would go north, I think.", "no ACTION: line"),
        ("My ACTION: will be to wait", "no ACTION: line"),  # mid-line never counts
        ("<think>ACTION: north</think>Hmm.", "inside a reasoning section"),
        ("ACTION:\n\nSome thought.\n\nMore.", ""),  # the next line after one blank is read
        ("ACTION: ``", "no action after it"),
        ("ACTION:\n```\nunclosed", "no action after it"),
    ],
)
def test_replies_without_a_readable_action_say_why(reply, problem):
    parsed = action_from_text(reply)
    if problem:
        assert parsed.action == "" and problem in parsed.format_error
    else:
        assert parsed == ParsedAction(action="Some thought.")


def test_an_action_line_wins_over_json_and_the_last_json_wins():
    assert action_from_text('{"action": "a"}\nACTION: b').action == "b"
    assert action_from_text('{"action": "a"} then {"action": "b"}').action == "b"
    assert action_from_text('{"action": 3}').format_error  # not a string


def test_only_one_pair_of_surrounding_marks_is_stripped():
    assert action_clean(' "\'say hi\'"\r ') == "'say hi'"
    # one matching pair, as written (`<b>`, `<kbd>`... are HTML markup, reduced to their text)
    assert action_clean("<x> and <y>") == "<x> and <y>"[1:-1]
    assert action_clean("<b>x</b> and <y>") == "x and <y>"
    assert action_clean("x" * 5000) == "x" * MAX_ACTION_CHARS


def test_a_hostile_reply_full_of_braces_is_read_quickly():
    started = time.monotonic()
    parsed = action_from_text("{" * 200_000 + '{"action": [' * 5000)
    assert parsed.format_error and time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("calls", "action", "problem"),
    [
        ([("act", '{"action": "go north"}')], "go north", ""),
        ([("act", {"action": "go north"})], "go north", ""),
        ([], None, "called no tool"),
        ([("act", '{"action": "a"}'), ("act", '{"action": "b"}')], None, "2 tool calls"),
        ([("move", '{"action": "a"}')], None, "unknown tool 'move'"),
        ([("act", '{"action": "a"')], None, "not valid JSON"),
        ([("act", {"direction": "north"})], None, 'no string argument "action"'),
        ([("act", "")], None, 'no string argument "action"'),
    ],
)
def test_tool_calls_are_read_strictly(calls, action, problem):
    read, said = action_from_tool_calls(calls)
    assert read == action
    assert (problem in said) if problem else said == ""


def test_the_tool_protocol_reads_the_completion_action():
    tool = action_read(completion=Completion(text="x", action=' "go" '), protocol="tool")
    assert tool == ParsedAction(action="go")
    broken = Completion(text="ACTION: go", action_error="the reply called no tool; call act")
    assert action_read(completion=broken, protocol="tool").format_error.startswith("the reply")
    assert action_read(completion=Completion(text="", action=" "), protocol="tool").format_error
    assert action_read(completion=broken, protocol="text") == ParsedAction(action="go")


@pytest.mark.parametrize(
    ("provider", "params", "protocol"),
    [
        ("anthropic", {}, "tool"),
        ("openai", {}, "tool"),
        ("openai_compatible", {}, "text"),
        ("openai_compatible", {"actions": "tool"}, "tool"),
        ("anthropic", {"actions": "text"}, "text"),
        ("builtin", {}, "text"),
        ("builtin", {"actions": "text"}, "text"),
    ],
)
def test_the_protocol_is_chosen_per_player(provider, params, protocol):
    assert action_protocol(Player(name="p", provider=provider, params=params)) == protocol


@pytest.mark.parametrize(
    ("provider", "params", "message"),
    [
        ("openai", {"actions": "json"}, "actions must be tool or text, got 'json'"),
        ("builtin", {"actions": "tool"}, "speak the text protocol only"),
    ],
)
def test_a_bad_protocol_param_is_refused(provider, params, message):
    with pytest.raises(PlayerError, match=message):
        action_protocol(Player(name="p", provider=provider, params=params))


def test_the_format_reminder_says_what_failed_and_how_to_act():
    text = format_reminder(protocol="text", problem="the reply has no ACTION: line",
                           steps_used=3, max_steps=30)
    assert text.startswith("[EnvDuels format reminder]")
    assert "no ACTION: line" in text and "3 of 30 steps" in text and "ACTION: <action>" in text
    tool = format_reminder(protocol="tool", problem="x", steps_used=1, max_steps=5)
    assert "call the tool act" in tool
