"""A loopback HTTP server that speaks the Anthropic and OpenAI wire formats, with scripted faults.

Tests point the official SDKs at `server.url` and script what the next requests get:

    with LoopbackServer() as server:
        server.script(rate_limited(retry_after="0.05"), reply("hello"))
        ...  # first request gets 429 + Retry-After, the second a normal completion

Every request is recorded (path, headers, JSON body) so tests can assert what was sent, and the
server tracks how many requests were in flight at once. It binds 127.0.0.1 only.

A request with `"stream": true` gets server-sent events in the provider's format (chunked
transfer encoding), with thinking / `reasoning_content` deltas when the fault has thinking text.
`stream_drop(after=n)` cuts the connection after n text chunks; `gate` pauses a stream after
`gate_after` chunks until the test sets it. `tool_call(action)` answers with a call of the `act`
tool in the provider's format (whole, or streamed as argument deltas); a request whose history
has a tool call without its result (or a result without its call) gets 400, as from a real API.
With `count_tokens=True` the server counts tokens from the request (4 characters a token) and
emulates both providers' prompt caches: Anthropic reads and writes at `cache_control`
breakpoints, OpenAI caches every prefix of whole messages per `prompt_cache_key`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.duels.players.loopback_cache import PromptCache, Usage, count_tokens
from tests.duels.players.loopback_tools import (
    anthropic_tool_blocks,
    anthropic_tool_events,
    openai_tool_calls,
    openai_tool_deltas,
    tool_history_problem,
)

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Fault:
    """What the server does with one request: `kind` is ok, status, hang, reset (the
    connection is closed with a TCP reset before any byte is sent), malformed, empty or
    silent (a stream that ends with no event)."""

    kind: str
    text: str = "ACTION: ready"
    status: int = 200
    retry_after: str | None = None
    delay_s: float = 0.0
    input_tokens: int = 11
    output_tokens: int = 3
    body: str = ""
    thinking: str = ""
    cache_read: int = 0  # reported as read from the prompt cache (when tokens are not counted)
    cache_write: int = 0
    chunk_chars: int = 8  # characters per streamed delta
    chunk_delay_s: float = 0.0  # pause between two streamed deltas
    drop_after: int | None = None  # streamed text deltas sent before the connection is cut
    gate: threading.Event | None = field(default=None, compare=False)
    gate_after: int = 1  # streamed text deltas sent before waiting for `gate`
    tool_calls: tuple[tuple[str, str], ...] = ()  # (tool name, arguments as JSON text)
    # Why the model stopped, in the provider's words ("" = as it would: done, or a tool call);
    # "length" (OpenAI) / "max_tokens" (Anthropic) is the token limit reached.
    stop: str = ""


def reply(text: str = "ACTION: ready", *, delay_s: float = 0.0, **options: Any) -> Fault:
    return Fault("ok", text=text, delay_s=delay_s, **options)


def tool_call(action: str | None = None, *, text: str = "", name: str = "act",
              arguments: str | None = None, calls: int = 1, **options: Any) -> Fault:
    """A reply calling `name` (`calls` times) with {"action": action}, or with the raw
    `arguments` text (to send broken JSON or a missing key)."""
    raw = arguments if arguments is not None else json.dumps({"action": action})
    return Fault("ok", text=text, tool_calls=((name, raw),) * calls, **options)


def stream_drop(text: str = "ACTION: ready", *, after: int = 2) -> Fault:
    """Stream `after` text deltas, then cut the connection without ending the body."""
    return Fault("ok", text=text, drop_after=after)


def silent_stream() -> Fault:
    """A streamed request gets 200 and an event stream that ends cleanly with no event, as
    llama-cpp-python answers a request that fails after its headers (a context overflow)."""
    return Fault("silent")


def context_overflow(*, window: int = 2048, requested: int = 2151) -> Fault:
    """HTTP 400 in llama-cpp-python's words for a prompt longer than its context window."""
    return server_error(400, body=json.dumps({"error": {
        "message": f"This model's maximum context length is {window} tokens. However, you "
                   f"requested {requested} tokens ({requested - 20} in the messages, 20 in the "
                   "completion). Please reduce the length of the messages or completion.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}))


def rate_limited(*, retry_after: str | None = "0") -> Fault:
    return Fault("status", status=429, retry_after=retry_after)


def server_error(status: int = 500, *, body: str = "") -> Fault:
    return Fault("status", status=status, body=body)


def hang(seconds: float) -> Fault:
    """Answer nothing for `seconds` (longer than the client's timeout), then give up."""
    return Fault("hang", delay_s=seconds)


def connection_reset() -> Fault:
    return Fault("reset")


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
    first_text_at: float | None = None  # time.time() when the first text delta was written


def anthropic_usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens - usage.cache_read - usage.cache_write,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
    }


def openai_usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
    }


def anthropic_body(fault: Fault, request: dict[str, Any], usage: Usage) -> dict[str, Any]:
    content = [] if fault.kind == "empty" or not fault.text else [
        {"type": "text", "text": fault.text}]
    content += anthropic_tool_blocks(fault.tool_calls)
    if fault.thinking:
        content.insert(0, {"type": "thinking", "thinking": fault.thinking, "signature": "sig"})
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", ""),
        "content": content,
        "stop_reason": fault.stop or ("tool_use" if fault.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": anthropic_usage(usage),
    }


def openai_body(fault: Fault, request: dict[str, Any], usage: Usage) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": fault.text or None}
    if fault.thinking:
        message["reasoning_content"] = fault.thinking
    if fault.tool_calls:
        message["tool_calls"] = openai_tool_calls(fault.tool_calls)
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": fault.stop or ("tool_calls" if fault.tool_calls else "stop"),
            }
        ],
        "usage": openai_usage(usage),
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def anthropic_events(
    fault: Fault, request: dict[str, Any], usage: Usage
) -> list[tuple[str, dict[str, Any], bool]]:
    """The Messages API's event stream as (event name, data, is a text delta)."""
    start = anthropic_body(fault, request, usage) | {"content": [], "stop_reason": None}
    start["usage"] = anthropic_usage(usage) | {"output_tokens": 1}
    events: list[tuple[str, dict[str, Any], bool]] = [
        ("message_start", {"type": "message_start", "message": start}, False)
    ]
    index = 0
    if fault.thinking:
        events.append(("content_block_start", {
            "type": "content_block_start", "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}, False))
        for piece in _pieces(fault.thinking, fault.chunk_chars):
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "thinking_delta", "thinking": piece}}, False))
        events.append(("content_block_delta", {
            "type": "content_block_delta", "index": index,
            "delta": {"type": "signature_delta", "signature": "sig"}}, False))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index},
                       False))
        index += 1
    if fault.kind != "empty" and (fault.text or not fault.tool_calls):
        events.append(("content_block_start", {
            "type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}}, False))
        for piece in _pieces(fault.text, fault.chunk_chars):
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece}}, True))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index},
                       False))
        index += 1
    events += anthropic_tool_events(fault.tool_calls, first_index=index,
                                    chunk_chars=fault.chunk_chars)
    stop = fault.stop or ("tool_use" if fault.tool_calls else "end_turn")
    events.append(("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": usage.output_tokens}}, False))
    events.append(("message_stop", {"type": "message_stop"}, False))
    return events


def openai_events(
    fault: Fault, request: dict[str, Any], usage: Usage
) -> list[tuple[str, dict[str, Any], bool]]:
    """Chat Completions chunks (usage last when `stream_options.include_usage`)."""
    base = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": request.get("model", "")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [("", chunk({"role": "assistant", "content": ""}), False)]
    for piece in _pieces(fault.thinking, fault.chunk_chars):
        events.append(("", chunk({"reasoning_content": piece}), False))
    for piece in _pieces(fault.text, fault.chunk_chars):
        events.append(("", chunk({"content": piece}), True))
    for delta in openai_tool_deltas(fault.tool_calls, chunk_chars=fault.chunk_chars):
        events.append(("", chunk(delta), False))
    events.append(("", chunk({}, fault.stop or ("tool_calls" if fault.tool_calls else "stop")),
                   False))
    if (request.get("stream_options") or {}).get("include_usage"):
        events.append(("", base | {"choices": [], "usage": openai_usage(usage)}, False))
    return events


def error_body(path: str, status: int, message: str) -> dict[str, Any]:
    if path == ANTHROPIC_PATH:
        kind = "rate_limit_error" if status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": status}}


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 with a queue of scripted faults (default: reply)."""

    def __init__(self, *, count_tokens: bool = False, keep: int | None = None) -> None:
        """`keep` bounds how many requests are remembered (all of them by default)."""
        self.count_tokens = count_tokens
        self.cache = PromptCache()
        self.received: list[Received] | deque[Received] = (
            [] if keep is None else deque(maxlen=keep))
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

    def _next_fault(self, request: dict[str, Any]) -> Fault:
        """The fault for `request`: the next scripted one (a subclass may decide by the request)."""
        with self._lock:
            return self._faults.popleft() if self._faults else reply()

    def usage_for(self, path: str, fault: Fault, request: dict[str, Any]) -> Usage:
        """The fault's token counts, or counted from the request with the cache emulated."""
        if not self.count_tokens:
            return Usage(fault.input_tokens, fault.output_tokens, fault.cache_read,
                         fault.cache_write)
        output = count_tokens(fault.text) + count_tokens(fault.thinking)
        with self._lock:
            if path == ANTHROPIC_PATH:
                total, read, written = self.cache.anthropic(request)
                return Usage(total, output, read, written)
            total, cached = self.cache.openai(request)
            return Usage(total, output, cached, 0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
                pass  # keep test output quiet

            def handle(self) -> None:
                with contextlib.suppress(ConnectionResetError):  # a client closed a kept-alive
                    super().handle()

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                seen = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                raw)
                with server._lock:
                    server.received.append(seen)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(server._next_fault(body or {}), body or {}, seen)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _stream(self, fault: Fault, request: dict[str, Any], seen: Received) -> None:
                usage = server.usage_for(self.path, fault, request)
                build = anthropic_events if self.path == ANTHROPIC_PATH else openai_events
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                texts = 0
                for name, data, is_text in build(fault, request, usage):
                    if is_text and fault.drop_after is not None and texts >= fault.drop_after:
                        self.close_connection = True  # cut: no last chunk, no message_stop
                        self.wfile.flush()
                        return
                    if is_text and fault.gate is not None and texts == fault.gate_after:
                        fault.gate.wait(30)
                    event = f"event: {name}\n" if name else ""
                    self._chunk(f"{event}data: {json.dumps(data)}\n\n".encode())
                    if is_text:
                        texts += 1
                        if seen.first_text_at is None:
                            seen.first_text_at = time.time()
                        if fault.chunk_delay_s:
                            server._stopping.wait(fault.chunk_delay_s)
                if self.path == OPENAI_PATH:
                    self._chunk(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _answer(self, fault: Fault, request: dict[str, Any], seen: Received) -> None:
                if fault.kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if fault.kind == "hang":
                    server._stopping.wait(fault.delay_s)
                    self.close_connection = True
                    return
                if fault.delay_s:
                    server._stopping.wait(fault.delay_s)
                headers: dict[str, str] = {}
                if problem := tool_history_problem(self.path, request):
                    fault = Fault("status", status=400, body=json.dumps(
                        error_body(self.path, 400, problem)))
                if fault.kind == "status":
                    status = fault.status
                    payload = (
                        fault.body
                        or json.dumps(error_body(self.path, status, f"loopback says {status}"))
                    ).encode()
                    if fault.retry_after is not None:
                        headers["Retry-After"] = fault.retry_after
                elif fault.kind == "silent" and request.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    return
                elif fault.kind == "malformed" and request.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", "40")
                    self.end_headers()
                    self.wfile.write(b'event: message_start\ndata: {"broken":\n\n'.ljust(40))
                    return
                elif fault.kind == "malformed":
                    status, payload = 200, b'{"id": "broken", "content": [ this is not json'
                elif request.get("stream") and self.path in {ANTHROPIC_PATH, OPENAI_PATH}:
                    self._stream(fault, request, seen)
                    return
                else:
                    status = 200
                    build = anthropic_body if self.path == ANTHROPIC_PATH else openai_body
                    usage = server.usage_for(self.path, fault, request)
                    payload = json.dumps(build(fault, request, usage)).encode()
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
