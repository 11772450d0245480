"""The host side of the protocol against a scripted transport: ids, limits, bad bytes."""

from __future__ import annotations

import json
import time

import pytest

from sandbox_runner import (
    EnvCodeError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
)
from sandbox_runner.protocol import LOG, REPLY, Channel, Transport, encode_body
from sandbox_runner.replies import ProtocolViolation


class ScriptedTransport(Transport):
    """Answers each request with whatever `answer(request)` returns, as (stream, bytes) pairs."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.queue: list[tuple[str, bytes]] = []

    def send(self, data: bytes) -> None:
        self.queue.extend(self.answer(json.loads(data)))

    def receive(self, timeout: float) -> list[tuple[str, bytes]]:
        if not self.queue:
            time.sleep(timeout)
            return []
        chunks, self.queue = self.queue, []
        return chunks

    def close(self) -> None:
        pass


def channel(answer, **limits) -> Channel:
    return Channel(ScriptedTransport(answer), max_reply_bytes=limits.get("reply", 4096),
                   max_log_bytes=limits.get("log", 1024))


def reply(request, **fields) -> bytes:
    return json.dumps({"id": request["id"], "ok": True, **fields}).encode() + b"\n"


def soon() -> float:
    return time.monotonic() + 0.5


def test_matching_reply_is_returned_and_log_is_kept():
    chan = channel(lambda request: [(LOG, b"hello "), (REPLY, reply(request, observation="x")),
                                    (LOG, b"world")])
    assert chan.call({"op": "reset", "seed": 1}, soon())["observation"] == "x"
    assert chan.log_text == "hello world"


def test_reply_split_across_chunks_is_joined():
    def answer(request):
        data = reply(request, observation="joined")
        return [(REPLY, data[:5]), (REPLY, data[5:])]

    assert channel(answer).call({"op": "reset"}, soon())["observation"] == "joined"


def test_reply_for_another_request_is_rejected():
    chan = channel(lambda request: [(REPLY, reply({"id": "forged"}, observation="x"))])
    with pytest.raises(ProtocolViolation, match="does not answer"):
        chan.call({"op": "reset"}, soon())


@pytest.mark.parametrize("line", [b"\xff\xfe\n", b'{"ok": true, "reward": NaN}\n', b"[1]\n"])
def test_garbage_replies_are_protocol_errors(line):
    with pytest.raises(EnvCodeError):
        channel(lambda request: [(REPLY, line)]).call({"op": "reset"}, soon())


def test_endless_line_is_cut_off_at_the_limit():
    chan = channel(lambda request: [(REPLY, b"z" * 1000)] * 10, reply=4096)
    with pytest.raises(SandboxOutputExceeded):
        chan.call({"op": "reset"}, soon())
    assert len(chan.replies) <= 4096 + 1000


def test_log_flood_is_cut_off():
    with pytest.raises(SandboxOutputExceeded, match="printed more than 1024 bytes"):
        channel(lambda request: [(LOG, b"x" * 2000)]).call({"op": "reset"}, soon())


def test_silence_times_out():
    with pytest.raises(SandboxTimeout):
        channel(lambda request: []).call({"op": "step"}, time.monotonic() + 0.05)


def test_guest_error_kinds_map_to_error_types():
    def failure(kind):
        return lambda request: [(REPLY, json.dumps({"id": request["id"], "ok": False, "error": {
            "type": "X", "message": "m", "kind": kind, "traceback": ""}}).encode() + b"\n")]

    with pytest.raises(SandboxMemoryExceeded):
        channel(failure("memory")).call({"op": "step"}, soon())
    with pytest.raises(SandboxOutputExceeded):
        channel(failure("output")).call({"op": "step"}, soon())
    with pytest.raises(EnvCodeError, match="X: m"):
        channel(failure("env")).call({"op": "step"}, soon())


def step(answer) -> tuple[str, bool, bool, float]:
    deadline = soon()
    body = encode_body({"op": "step", "action": "go"})
    return channel(answer).exchange_step(body, deadline, deadline - time.monotonic())


def canonical(request_id: str, observation: str, tail: str) -> list[tuple[str, bytes]]:
    """A step reply exactly as the guest formats it (the host's fast path)."""
    line = '{"ok":true,"id":"' + request_id + '","observation":' + json.dumps(observation)
    return [(REPLY, (line + tail + "\n").encode())]


@pytest.mark.parametrize("observation", ["plain", 'quote " and \\ and \n', "caf\u00e9 \u2603"])
def test_step_replies_read_the_same_on_the_fast_and_the_general_path(observation):
    fast = step(lambda request: canonical(
        request["id"], observation, ',"done":true,"success":false,"reward":-1.5e2}'))
    general = step(lambda request: [(REPLY, reply(
        request, observation=observation, done=True, success=False, reward=-150))])
    assert fast == general == (observation, True, False, -150.0)


@pytest.mark.parametrize("tail, error", [
    (',"done":true,"success":true,"reward":NaN}', "invalid reply"),
    (',"done":"yes","success":true,"reward":1.0}', "malformed step reply"),
    (',"done":true,"success":true,"reward":1.0} extra', "extra data"),
])
def test_step_replies_off_the_fast_path_are_still_checked(tail, error):
    with pytest.raises(ProtocolViolation, match=error):
        step(lambda request: canonical(request["id"], "x", tail))


def test_step_reply_for_another_request_is_rejected_on_the_fast_path():
    with pytest.raises(ProtocolViolation, match="does not answer"):
        step(lambda request: canonical(
            request["id"] + "0", "x", ',"done":true,"success":true,"reward":1.0}'))
