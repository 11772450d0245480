"""A loopback HTTP server that speaks the Anthropic and OpenAI wire formats, with scripted faults.

Tests point the official SDKs at `server.url` and script what the next requests get:

    with LoopbackServer() as server:
        server.script(rate_limited(retry_after="0.05"), reply("hello"))
        ...  # first request gets 429 + Retry-After, the second a normal completion

Every request is recorded (path, headers, JSON body) so tests can assert what was sent, and the
server tracks how many requests were in flight at once. It binds 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Fault:
    """What the server does with one request: `kind` is ok, status, hang, malformed or empty."""

    kind: str
    text: str = "ACTION: ready"
    status: int = 200
    retry_after: str | None = None
    delay_s: float = 0.0
    input_tokens: int = 11
    output_tokens: int = 3
    body: str = ""


def reply(text: str = "ACTION: ready", *, delay_s: float = 0.0, **tokens: int) -> Fault:
    return Fault("ok", text=text, delay_s=delay_s, **tokens)


def rate_limited(*, retry_after: str | None = "0") -> Fault:
    return Fault("status", status=429, retry_after=retry_after)


def server_error(status: int = 500, *, body: str = "") -> Fault:
    return Fault("status", status=status, body=body)


def hang(seconds: float) -> Fault:
    """Answer nothing for `seconds` (longer than the client's timeout), then give up."""
    return Fault("hang", delay_s=seconds)


def malformed() -> Fault:
    return Fault("malformed")


def empty() -> Fault:
    return Fault("empty", text="")


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes = field(repr=False, default=b"")


def anthropic_body(fault: Fault, request: dict[str, Any]) -> dict[str, Any]:
    content = [] if fault.kind == "empty" else [{"type": "text", "text": fault.text}]
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", ""),
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": fault.input_tokens, "output_tokens": fault.output_tokens},
    }


def openai_body(fault: Fault, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": fault.text or None},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": fault.input_tokens,
            "completion_tokens": fault.output_tokens,
            "total_tokens": fault.input_tokens + fault.output_tokens,
        },
    }


def error_body(path: str, status: int, message: str) -> dict[str, Any]:
    if path == ANTHROPIC_PATH:
        kind = "rate_limit_error" if status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": status}}


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 with a queue of scripted faults (default: reply)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_fault(self) -> Fault:
        with self._lock:
            return self._faults.popleft() if self._faults else reply()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
                pass  # keep test output quiet

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server._lock:
                    server.received.append(
                        Received(
                            self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw
                        )
                    )
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(server._next_fault(), body or {})
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, fault: Fault, request: dict[str, Any]) -> None:
                if fault.kind == "hang":
                    server._stopping.wait(fault.delay_s)
                    self.close_connection = True
                    return
                if fault.delay_s:
                    server._stopping.wait(fault.delay_s)
                headers: dict[str, str] = {}
                if fault.kind == "status":
                    status = fault.status
                    payload = (
                        fault.body
                        or json.dumps(error_body(self.path, status, f"loopback says {status}"))
                    ).encode()
                    if fault.retry_after is not None:
                        headers["Retry-After"] = fault.retry_after
                elif fault.kind == "malformed":
                    status, payload = 200, b'{"id": "broken", "content": [ this is not json'
                else:
                    status = 200
                    build = anthropic_body if self.path == ANTHROPIC_PATH else openai_body
                    payload = json.dumps(build(fault, request)).encode()
                if self.path not in {ANTHROPIC_PATH, OPENAI_PATH}:
                    status = 404
                    payload = json.dumps(error_body(self.path, 404, "no such route")).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def loopback_player(server: LoopbackServer, provider: str, **overrides: Any):
    """An unsaved Player of `provider` aimed at `server`, with fast retries for tests."""
    from duels.models import Player

    base_url = server.url if provider == "anthropic" else f"{server.url}/v1"
    params = {"backoff_base_s": 0.01, "timeout_s": 2, "max_retries": 2}
    params.update(overrides.pop("params", {}))
    fields = {
        "name": f"{provider}-loopback",
        "provider": provider,
        "model": f"{provider}-test-model",
        "base_url": base_url,
        "api_key_env": "LOOPBACK_TEST_API_KEY",
        "params": params,
        "price_in": 3.0,
        "price_out": 15.0,
    }
    fields.update(overrides)
    return Player(**fields)
