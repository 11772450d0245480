"""The host's checks of every value a guest reply carries (sandbox_runner/replies.py)."""

from __future__ import annotations

import json

import pytest

from sandbox_runner import EnvCodeError, SandboxOutputExceeded
from sandbox_runner.replies import (
    ProtocolViolation,
    reply_answer,
    reply_load_values,
    reply_reference_actions,
    reply_step_values,
    reply_text,
)

REQUEST_ID = "abcd0123-7"


def line(**fields) -> bytes:
    return json.dumps({"ok": True, "id": REQUEST_ID, **fields}).encode() + b"\n"


def step_values(raw: bytes) -> tuple:
    return reply_step_values(raw, REQUEST_ID, 1024)


@pytest.mark.parametrize("fields", [
    {"max_steps": 10**9, "has_reference": False},
    {"max_steps": -5, "has_reference": False},
    {"max_steps": True, "has_reference": False},
    {"max_steps": 30.0, "has_reference": False},
    {"has_reference": False},
    {"max_steps": 30, "has_reference": 1},
])
def test_load_values_outside_the_contract_are_violations(fields):
    with pytest.raises(ProtocolViolation):
        reply_load_values(fields)


def test_load_values_inside_the_contract_pass():
    assert reply_load_values({"max_steps": 200, "has_reference": True}) == (200, True)
    assert reply_load_values({"max_steps": 1, "has_reference": False}) == (1, False)


@pytest.mark.parametrize("raw", [
    # the guest's own format (the fast path), with a reward that overflows to infinity
    b'{"ok":true,"id":"' + REQUEST_ID.encode()
    + b'","observation":"x","done":true,"success":true,"reward":1e999}\n',
    line(observation="x", done=True, success=True, reward=10**400),
    line(observation="x", done=True, success=True, reward=True),
    line(observation="x", done=True, success=True, reward="1"),
    line(observation="x", done=1, success=True),
    line(observation=["x"], done=True, success=True),
    line(done=True, success=True),
    line(observation="\ud800", done=True, success=True),
])
def test_forged_step_replies_are_violations(raw):
    with pytest.raises(ProtocolViolation):
        step_values(raw)


def test_an_absent_or_null_reward_is_zero():
    assert step_values(line(observation="o", done=False, success=False)) == ("o", False, False,
                                                                          0.0)
    assert step_values(line(observation="o", done=False, success=False, reward=None))[3] == 0.0


def test_an_oversized_observation_is_an_output_error_on_both_paths():
    fast = (b'{"ok":true,"id":"' + REQUEST_ID.encode() + b'","observation":"' + b"o" * 2000
            + b'","done":false,"success":false,"reward":0.0}\n')
    for raw in (fast, line(observation="o" * 2000, done=False, success=False)):
        with pytest.raises(SandboxOutputExceeded):
            step_values(raw)


@pytest.mark.parametrize("reply", [
    {"ok": "yes", "id": REQUEST_ID},
    {"ok": 1, "id": REQUEST_ID},
    {"ok": False, "id": REQUEST_ID, "error": {"kind": "root", "message": "m"}},
    {"ok": False, "id": REQUEST_ID, "error": "boom"},
    {"ok": True, "id": 7},
])
def test_forged_envelopes_are_violations(reply):
    with pytest.raises(ProtocolViolation):
        reply_answer(reply, REQUEST_ID)


def test_guest_error_texts_are_bounded():
    with pytest.raises(EnvCodeError) as raised:
        reply_answer({"ok": False, "id": REQUEST_ID, "error": {
            "kind": "env", "type": "T" * 10_000, "message": "m" * 100_000,
            "traceback": "t" * 100_000}}, REQUEST_ID)
    assert len(str(raised.value)) < 9000


@pytest.mark.parametrize("actions", [
    "north", [1, 2], ["go"] * 1001, ["x" * 10_001], {"0": "go"},
])
def test_forged_reference_actions_are_violations(actions):
    with pytest.raises(ProtocolViolation):
        reply_reference_actions({"actions": actions})


def test_reference_actions_within_bounds_pass():
    assert reply_reference_actions({"actions": ["north", "é" * 100]}) == ["north", "é" * 100]
    assert reply_reference_actions({"actions": None}) is None


def test_text_must_be_a_str():
    with pytest.raises(ProtocolViolation, match="not text"):
        reply_text(b"bytes", "observation", 100)
