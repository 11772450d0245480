"""The environment server's caps on what one client sends, driven through its ASGI interface:
an HTTP body over 256 KiB, a websocket message over 256 KiB (in UTF-8), an action over 65,536
characters and a message of the wrong shape each get an error naming the limit, and the session
lives on."""

from __future__ import annotations

import asyncio
import json

from duels.trainers.openenv_server import (
    MAX_ACTION_CHARS,
    MAX_MESSAGE_BYTES,
    EnvServer,
    ServedDesign,
)

DESIGN = ServedDesign(id="d" * 64, source="class Env: pass", max_steps=5, title="t")


def server() -> EnvServer:
    return EnvServer(designs=[DESIGN], max_sessions=2, idle_timeout=5.0, backend="auto")


async def exchange(app: EnvServer, scope: dict, incoming: list[dict]) -> list[dict]:
    queue: asyncio.Queue = asyncio.Queue()
    for message in incoming:
        queue.put_nowait(message)
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, queue.get, send), timeout=10)
    return sent


def test_an_http_body_over_the_cap_is_refused_with_413():
    body = b"{" + b" " * MAX_MESSAGE_BYTES + b"}"
    scope = {"type": "http", "method": "POST", "path": "/reset"}
    half = len(body) // 2
    sent = asyncio.run(exchange(server(), scope, [
        {"type": "http.request", "body": body[:half], "more_body": True},
        {"type": "http.request", "body": body[half:], "more_body": False}]))
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"]) == {"detail": "request body too large"}


def test_oversized_and_malformed_messages_are_errors_and_the_session_lives_on():
    scope = {"type": "websocket", "path": "/ws"}
    app = server()
    messages = [
        "x" * (MAX_MESSAGE_BYTES + 1),
        json.dumps({"type": "state", "data": {"note": "é" * (MAX_MESSAGE_BYTES // 2)}}),
        json.dumps({"type": "step", "data": {"action": "a" * (MAX_ACTION_CHARS + 1)}}),
        "[1, 2]",
        "{not json",
        json.dumps({"type": "launch"}),
        json.dumps({"type": "step", "data": {"action": "look"}}),
        json.dumps({"type": "state"}),
    ]
    sent = asyncio.run(exchange(app, scope, [{"type": "websocket.connect"}]
                                + [{"type": "websocket.receive", "text": m} for m in messages]
                                + [{"type": "websocket.disconnect"}]))
    assert sent[0] == {"type": "websocket.accept"}
    replies = [json.loads(message["text"]) for message in sent[1:]]
    codes = [reply["data"].get("code") for reply in replies]
    assert codes == ["INVALID_JSON", "INVALID_JSON", "VALIDATION_ERROR", "INVALID_JSON",
                     "INVALID_JSON", "UNKNOWN_TYPE", "SESSION_ERROR", None]
    assert f"at most {MAX_MESSAGE_BYTES} bytes" in replies[0]["data"]["message"]
    assert f"at most {MAX_ACTION_CHARS} characters" in replies[2]["data"]["message"]
    assert replies[-1] == {"type": "state", "data": {
        "episode_id": None, "step_count": 0, "design": None, "seed": None, "done": True,
        "success": False}}
    assert app.sessions == {}


def test_a_session_past_the_cap_is_refused_with_capacity_reached():
    app = server()
    app.sessions = {1: object(), 2: object()}
    sent = asyncio.run(exchange(app, {"type": "websocket", "path": "/ws"},
                                [{"type": "websocket.connect"}]))
    assert json.loads(sent[1]["text"])["data"]["code"] == "CAPACITY_REACHED"
    assert sent[2] == {"type": "websocket.close", "code": 1013}


def test_a_stateless_reset_takes_a_slot_and_past_the_cap_gets_503():
    app = server()
    app.sessions = {1: object()}
    app.stateless_resets = 1
    sent = asyncio.run(exchange(app, {"type": "http", "method": "POST", "path": "/reset"},
                                [{"type": "http.request", "body": b"{}"}]))
    assert sent[0]["status"] == 503
    assert json.loads(sent[1]["body"])["code"] == "CAPACITY_REACHED"
    app.sessions = {1: object()}
    app.stateless_resets = 1  # a websocket finds the slot taken by the reset
    sent = asyncio.run(exchange(app, {"type": "websocket", "path": "/ws"},
                                [{"type": "websocket.connect"}]))
    assert json.loads(sent[1]["text"])["data"]["code"] == "CAPACITY_REACHED"
