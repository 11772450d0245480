"""How the guest reads requests and writes replies, run on the host (no sandbox): a step exactly
as the host writes it takes the fast path, every other line is read as JSON, and replies are
the JSON the json module would write (the guest uses its C parts only, to start quickly)."""

from __future__ import annotations

import json
import math

import pytest

from sandbox_runner.guest import guest_namespace
from sandbox_runner.protocol import encode_body

REQUEST_ID = "0a1b2c3d-17"


def host_line(message: dict) -> bytes:
    """A request line exactly as the host's channel writes it."""
    return b'{"id":"' + REQUEST_ID.encode() + b'"' + encode_body(message)


def read_as_json(line: bytes) -> dict:
    guest = guest_namespace()
    return guest["make_scanner"](guest["JsonDecoding"])(line.decode(), 0)[0]


@pytest.mark.parametrize("action", ["go north", "", "say 'hi' #1 [x] {y} ~!", "x" * 5000])
def test_a_step_as_the_host_writes_it_takes_the_fast_path(action):
    line = host_line({"op": "step", "action": action})
    assert guest_namespace()["step_request"](line) == (f'"{REQUEST_ID}"', action)
    assert read_as_json(line) == {"id": REQUEST_ID, "op": "step", "action": action}


@pytest.mark.parametrize("action", ['say "hi"', "back\\slash", "caf\u00e9", "tab\t", "two\nlines"])
def test_an_action_with_escapes_is_read_as_json(action):
    line = host_line({"op": "step", "action": action})
    assert guest_namespace()["step_request"](line) is None
    assert read_as_json(line) == {"id": REQUEST_ID, "op": "step", "action": action}


@pytest.mark.parametrize("line", [
    b'{"id":"0a-1","op":"step","action":"}\n',  # one quote, shared by the middle and the end
    b'{"id":"0a-","op":"step","action":"x"}\n',
    b'{"id":"-1","op":"step","action":"x"}\n',
    b'{"id":"0A-1","op":"step","action":"x"}\n',
    b'{"id":"0a-1-2","op":"step","action":"x"}\n',
    b'{"id":"0a-1","op":"reset","action":"x"}\n',
    b'{"id":"0a-1","op":"step","action":"x"}',
    b'{"id":"0a-1","op":"step","action":"x","op":"step","action":"y"}\n',
    b'{"id":"0a-1","op":"step","action":"\x7f"}\n',
])
def test_any_other_line_misses_the_fast_path(line):
    assert guest_namespace()["step_request"](line) is None


def test_requests_read_as_json_would():
    line = b'{"id":"0a-1","op":"load","code":"x = \\"\\u00e9\\"\\n","n":-1.5e3,"nan":NaN}\n'
    request = read_as_json(line)
    expected = json.loads(line)
    assert math.isnan(request.pop("nan")) and math.isnan(expected.pop("nan"))
    assert request == expected


def test_replies_are_written_as_json_would():
    encode = guest_namespace()["encode"]
    reply = {"ok": True, "id": REQUEST_ID, "observation": 'caf\u00e9 "q" \\ \n\u2603',
             "max_steps": 7, "has_reference": False, "actions": ["a", "b"], "error": None}
    assert encode(reply) == json.dumps(reply, allow_nan=False, separators=(",", ":"))
    with pytest.raises(ValueError, match="Out of range float"):
        encode({"reward": float("nan")})
    with pytest.raises(TypeError, match="Object of type bytes is not JSON serializable"):
        encode({"observation": b"raw"})
