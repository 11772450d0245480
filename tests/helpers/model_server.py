"""A real OpenAI-compatible HTTP model server on 127.0.0.1 that answers as the built-in players do.

The `model` field of a request picks the built-in player whose answers it gives (by model id, e.g.
`scripted-architect-v1`), so a player configured as `openai_compatible` against this server
plays exactly like that built-in player, through the real SDK and real HTTP. `outage(after=n,
count=m)` makes requests n+1 .. n+m answer 503, as a provider having a bad minute does.
`policy`, when given, answers every request instead: it takes the chat messages and returns the
reply text (a test's own solver).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from duels.players.builtin import BUILTIN_PLAYER_SPECS, BuiltinPlayer

SPECS = {spec["model"]: spec for spec in BUILTIN_PLAYER_SPECS}


class ModelServer:
    """Serves POST /v1/chat/completions (whole, or streamed as server-sent events when the
    request asks `stream`); counts requests and 503s."""

    def __init__(self, *, policy: Callable[[list[dict[str, Any]]], str] | None = None) -> None:
        self.policy = policy
        self.requests = 0
        self.unavailable = 0
        self._outage: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def outage(self, *, after: int, count: int) -> None:
        """Answer 503 to requests number after+1 .. after+count (counted from the start)."""
        self._outage = (after, after + count)

    def _number(self) -> int:
        with self._lock:
            self.requests += 1
            return self.requests

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        number = self._number()
        if self._outage and self._outage[0] < number <= self._outage[1]:
            with self._lock:
                self.unavailable += 1
            return 503, {"error": {"message": "overloaded, try again later",
                                   "type": "server_error", "code": 503}}
        if self.policy is not None:
            text = self.policy(body["messages"])
            tokens_in, tokens_out = 10, max(1, len(text) // 4)
        else:
            spec = SPECS.get(body.get("model", ""))
            if spec is None:
                return 404, {"error": {"message": f"unknown model {body.get('model')!r}"}}
            player = BuiltinPlayer(name=spec["name"], model=spec["model"], params=spec["params"])
            completion = player.complete(body["messages"],
                                         max_tokens=body.get("max_tokens", 1024))
            text = completion.text
            tokens_in, tokens_out = completion.input_tokens, completion.output_tokens
        return 200, {
            "id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out},
        }

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload = server.answer(body)
                if body.get("stream") and status == 200:
                    self.stream(payload)
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def stream(self, payload: dict[str, Any]) -> None:
                """The answer as server-sent chat.completion.chunk events, then [DONE]."""
                message = payload["choices"][0]["message"]
                base = {key: payload[key] for key in ("id", "created", "model")}
                chunks = [
                    {"index": 0, "delta": {"role": "assistant", "content": message["content"]},
                     "finish_reason": None},
                    {"index": 0, "delta": {}, "finish_reason": "stop"},
                ]
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for choice in chunks:
                    event = {**base, "object": "chat.completion.chunk", "choices": [choice]}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                usage = {**base, "object": "chat.completion.chunk", "choices": [],
                         "usage": payload["usage"]}
                self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
