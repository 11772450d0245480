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
from sandbox_runner.protocol import LOG, REPLY, Channel, ProtocolViolation, Transport


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
