"""An OpenEnv environment server for EnvDuels designs (`manage.py serve_envs`), as an ASGI app.

It speaks what the `openenv` package's clients speak. The session is the websocket at `/ws`:
JSON messages `{"type": "reset", "data": {"design"?, "seed"?, "episode_id"?}}`,
`{"type": "step", "data": {"action": "<text>"}}`, `{"type": "state"}` and `{"type": "close"}`,
answered by `{"type": "observation", "data": {"observation", "reward", "done", "metadata"}}`,
`{"type": "state", "data": {...}}` or `{"type": "error", "data": {"message", "code"}}`.
Plain HTTP: GET /health, /schema and /metadata, and a stateless POST /reset (a fresh sandbox,
reset, closed) that shows a task's first observation.

Every session plays in its own fresh sandbox (taken from the runner's ready pool on each reset,
closed when the episode ends or the session does), so a design's code never runs in this
process and sessions share nothing. At most `max_sessions` sessions and stateless POST /reset
requests are open at once, at most `max_client_sessions` of them from one client address (a
further one is refused with CAPACITY_REACHED, a websocket closed with 1013); one address may
reset `resets_per_minute` times a minute; a session that plays nothing (no reset, no step) for
`idle_timeout` seconds is closed. The server keeps no state beyond its open sessions and the
last minute's resets, so N replicas behind any load balancer scale it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from duels.trainers.client_limits import ClientLimits, client_address
from sandbox_runner import SandboxError, open_sandbox

MAX_ACTION_CHARS = 65536
MAX_MESSAGE_BYTES = 256 * 1024
ACTION_SCHEMA = {"type": "object", "properties": {"action": {"type": "string",
                 "maxLength": MAX_ACTION_CHARS}}, "required": ["action"]}
OBSERVATION_SCHEMA = {"type": "object", "properties": {
    "text": {"type": "string"}, "design": {"type": "string"}, "seed": {"type": "integer"},
    "step": {"type": "integer"}, "success": {"type": "boolean"}}}
STATE_SCHEMA = {"type": "object", "properties": {
    "episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer"},
    "design": {"type": ["string", "null"]}, "seed": {"type": ["integer", "null"]},
    "done": {"type": "boolean"}, "success": {"type": "boolean"}}}


class SessionError(Exception):
    """A request a session cannot serve; `code` is the OpenEnv error code."""

    def __init__(self, message: str, code: str = "VALIDATION_ERROR",
                 retry_after: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after


@dataclass
class ServedDesign:
    """One design the server plays: an id clients name, its source and its action cap."""

    id: str
    source: str
    max_steps: int
    title: str = ""


@dataclass
class EnvSession:
    """One client's episode state; its sandbox is its own."""

    number: int
    client: str = "unknown"
    sandbox: Any = None
    design: ServedDesign | None = None
    seed: int | None = None
    episode_id: str | None = None
    steps: int = 0
    done: bool = True
    success: bool = False
    sandboxes_opened: list[int] = field(default_factory=list)

    def state(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "step_count": self.steps,
                "design": self.design.id if self.design else None, "seed": self.seed,
                "done": self.done, "success": self.success}


class EnvServer:
    """The ASGI application; blocking sandbox calls run on its own thread pool."""

    def __init__(self, *, designs: list[ServedDesign], max_sessions: int = 64,
                 idle_timeout: float = 300.0, backend: str = "auto",
                 max_client_sessions: int = 8, resets_per_minute: int = 30) -> None:
        if not designs:
            raise ValueError("no design to serve")
        self.designs = {design.id: design for design in designs}
        self.default = designs[0]
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.backend = backend
        self.sessions: dict[int, EnvSession] = {}
        self.stateless_resets = 0  # POST /reset requests holding a sandbox now
        self.clients = ClientLimits(max_sessions=max_client_sessions,
                                    resets_per_minute=resets_per_minute)
        self.connections = 0  # every HTTP request and websocket this server accepted
        self.sandbox_serial = itertools.count(1)
        self.session_serial = itertools.count(1)
        self.executor = ThreadPoolExecutor(max_workers=max_sessions + 4,
                                           thread_name_prefix="envduels-env")

    async def blocking(self, function, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, function, *args)

    # --- episodes ------------------------------------------------------------------------

    def design_for(self, name: Any) -> ServedDesign:
        if name in (None, ""):
            return self.default
        if not isinstance(name, str):
            raise SessionError("design must be a string: one of the ids /metadata lists")
        matches = [d for d in self.designs.values() if d.id == name or d.id.startswith(name)]
        if len(matches) != 1:
            raise SessionError(f"unknown or ambiguous design {name[:80]!r}; GET /metadata "
                               "lists the designs this server plays")
        return matches[0]

    async def session_close_sandbox(self, session: EnvSession) -> None:
        sandbox, session.sandbox = session.sandbox, None
        if sandbox is not None:
            await self.blocking(sandbox.close)

    def count_reset(self, session: EnvSession) -> None:
        """Count one reset of the session's address, refused past --resets-per-minute."""
        wait = self.clients.reset_wait(session.client)
        if wait:
            raise SessionError(f"this address reset {self.clients.resets_per_minute} times in "
                               f"the last minute (--resets-per-minute); retry in {wait} s",
                               "CAPACITY_REACHED", retry_after=wait)

    async def session_reset(self, session: EnvSession, data: dict[str, Any]) -> dict[str, Any]:
        design = self.design_for(data.get("design"))
        seed = data.get("seed")
        if seed is None:
            seed = random.SystemRandom().randrange(2**31)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise SessionError("seed must be an integer in [0, 2**63)")
        self.count_reset(session)
        await self.session_close_sandbox(session)
        try:
            session.sandbox = await self.blocking(open_sandbox, design.source, None,
                                                  self.backend)
            text = await self.blocking(session.sandbox.reset, seed)
        except SandboxError as error:
            await self.session_close_sandbox(session)
            raise SessionError(f"the environment failed to start: {error}",
                               "EXECUTION_ERROR") from error
        session.sandboxes_opened.append(next(self.sandbox_serial))
        session.design, session.seed, session.steps = design, seed, 0
        session.done, session.success = False, False
        session.episode_id = str(data.get("episode_id") or uuid.uuid4())[:200]
        return self.observation(session, text, reward=0.0)

    async def session_step(self, session: EnvSession, data: dict[str, Any]) -> dict[str, Any]:
        action = data.get("action")
        if not isinstance(action, str) or len(action) > MAX_ACTION_CHARS:
            raise SessionError(f'the action is {{"action": "<text>"}}, at most '
                               f"{MAX_ACTION_CHARS} characters")
        if session.sandbox is None or session.done:
            raise SessionError("no episode is running: send reset first", "SESSION_ERROR")
        try:
            result = await self.blocking(session.sandbox.step, action)
        except SandboxError as error:
            # An environment fault ends the episode as a failure, as in a duel.
            session.steps += 1
            session.done, session.success = True, False
            await self.session_close_sandbox(session)
            return self.observation(session, f"The environment failed: {error}", reward=0.0,
                                    error=type(error).__name__)
        session.steps += 1
        session.success = bool(result.done and result.success)
        # done ends the episode either way; metadata says when the action cap ended it.
        truncated = not result.done and session.steps >= session.design.max_steps
        session.done = bool(result.done) or truncated
        if session.done:
            await self.session_close_sandbox(session)
        return self.observation(session, result.observation, reward=float(result.reward or 0),
                                truncated=truncated)

    def observation(self, session: EnvSession, text: str, *, reward: float,
                    error: str = "", truncated: bool = False) -> dict[str, Any]:
        metadata = {"episode_id": session.episode_id, "sandbox": session.sandboxes_opened[-1],
                    "max_steps": session.design.max_steps, "truncated": truncated}
        if error:
            metadata["error"] = error
        return {"observation": {"text": text, "design": session.design.id, "seed": session.seed,
                                "step": session.steps, "success": session.success},
                "reward": reward, "done": session.done, "metadata": metadata}

    # --- ASGI ----------------------------------------------------------------------------

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "http":
            self.connections += 1
            await self.http(scope, receive, send)
        elif scope["type"] == "websocket":
            self.connections += 1
            await self.websocket(scope, receive, send)

    async def http(self, scope, receive, send) -> None:
        method, path = scope["method"], scope["path"].rstrip("/") or "/"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_MESSAGE_BYTES:
                await self.reply(send, 413, {"detail": "request body too large"})
                return
            if not message.get("more_body"):
                break
        if await self.http_route(method, path, body, send, client_address(scope)):
            return
        if method == "GET" and path == "/health":
            await self.reply(send, 200, {"status": "healthy", "sessions": len(self.sessions),
                                         "max_sessions": self.max_sessions})
        elif method == "GET" and path == "/schema":
            await self.reply(send, 200, self.schema())
        elif method == "GET" and path == "/metadata":
            await self.reply(send, 200, self.metadata())
        elif method == "GET" and path == "/state":
            await self.reply(send, 200, EnvSession(number=0).state())
        elif method == "POST" and path == "/reset":
            await self.http_reset(body, send, client_address(scope))
        elif method == "POST" and path == "/step":
            await self.reply(send, 409, {"detail": "an episode lives in a session: connect to "
                                                   "the /ws websocket (openenv's clients do)"})
        else:
            await self.reply(send, 404, {"detail": f"no route {method} {path}"})

    async def http_route(self, method: str, path: str, body: bytes, send, client: str) -> bool:
        """A route of a subclass's own (`client`: the peer's address, for its limits); True
        when it answered the request."""
        return False

    def schema(self) -> dict[str, Any]:
        return {"action": ACTION_SCHEMA, "observation": OBSERVATION_SCHEMA,
                "state": STATE_SCHEMA}

    def metadata(self) -> dict[str, Any]:
        return {"name": "envduels", "description": "EnvDuels environment designs, each session "
                "in its own sandbox", "default_design": self.default.id,
                "designs": [{"id": d.id, "title": d.title, "max_steps": d.max_steps}
                            for d in self.designs.values()]}

    def full(self) -> bool:
        """Every slot is taken: by open sessions and stateless resets together."""
        return len(self.sessions) + self.stateless_resets >= self.max_sessions

    def capacity_message(self) -> str:
        return f"all {self.max_sessions} sessions are in use; retry later or add a replica"

    def refusal(self, client: str) -> str:
        """Why a new session or stateless reset from `client` is refused ("" when it is not):
        every slot is taken, or this address holds its share."""
        return self.capacity_message() if self.full() else self.clients.refusal(client)

    async def http_reset(self, body: bytes, send, client: str = "unknown") -> None:
        refused = self.refusal(client)
        if refused:
            await self.reply(send, 503, {"detail": refused, "code": "CAPACITY_REACHED"})
            return
        self.stateless_resets += 1
        self.clients.take(client)
        try:
            await self.http_reset_in_slot(body, send, client)
        finally:
            self.stateless_resets -= 1
            self.clients.give_back(client)

    async def http_reset_in_slot(self, body: bytes, send, client: str) -> None:
        try:
            data = json.loads(body or b"{}")
            if not isinstance(data, dict):
                raise SessionError("the body is a JSON object")
            session = EnvSession(number=0, client=client)
            try:
                result = await self.session_reset(session, data)
            finally:
                await self.session_close_sandbox(session)
        except SessionError as error:
            if error.retry_after:
                await self.reply(send, 429, {"detail": str(error), "code": error.code},
                                 headers=[(b"retry-after", str(error.retry_after).encode())])
            else:
                await self.reply(send, 422, {"detail": str(error)})
            return
        except ValueError as error:
            await self.reply(send, 422, {"detail": str(error)})
            return
        await self.reply(send, 200, {key: result[key] for key in ("observation", "reward",
                                                                  "done", "metadata")})

    @staticmethod
    async def reply(send, status: int, payload: dict[str, Any],
                    headers: list[tuple[bytes, bytes]] = ()) -> None:
        data = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(data)).encode()), *headers]})
        await send({"type": "http.response.body", "body": data})

    async def websocket(self, scope, receive, send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        if scope["path"].rstrip("/") != "/ws":
            await send({"type": "websocket.close", "code": 4404})
            return
        await send({"type": "websocket.accept"})
        client = client_address(scope)
        refused = self.refusal(client)
        if refused:
            await self.ws_send(send, "error", {"message": refused, "code": "CAPACITY_REACHED"})
            await send({"type": "websocket.close", "code": 1013})  # try again later
            return
        session = EnvSession(number=next(self.session_serial), client=client)
        self.sessions[session.number] = session
        self.clients.take(client)
        try:
            await self.ws_loop(session, receive, send)
        finally:
            self.sessions.pop(session.number, None)
            self.clients.give_back(client)
            await self.session_close_sandbox(session)

    async def ws_loop(self, session: EnvSession, receive, send) -> None:
        clock = asyncio.get_running_loop().time
        played = clock()  # the last reset or step: other messages do not keep a session
        while True:
            try:
                message = await asyncio.wait_for(
                    receive(), timeout=max(0.0, played + self.idle_timeout - clock()))
            except TimeoutError:
                await self.ws_send(send, "error", {
                    "message": f"session closed after {self.idle_timeout:g} s without a "
                               "reset or a step", "code": "SESSION_ERROR"})
                await send({"type": "websocket.close", "code": 1000})
                return
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text") or (message.get("bytes") or b"").decode("utf-8", "replace")
            try:
                fits = (len(raw) <= MAX_MESSAGE_BYTES
                        and len(raw.encode("utf-8", "replace")) <= MAX_MESSAGE_BYTES)
                request = json.loads(raw) if fits else None
                if not isinstance(request, dict):
                    raise SessionError("a message is a JSON object of at most "
                                       f"{MAX_MESSAGE_BYTES} bytes", "INVALID_JSON")
                kind, data = request.get("type"), request.get("data") or {}
                if not isinstance(data, dict):
                    raise SessionError("data must be a JSON object")
                if kind == "close":
                    await send({"type": "websocket.close", "code": 1000})
                    return
                if kind in ("reset", "step"):
                    played = clock()
                if kind == "reset":
                    await self.ws_send(send, "observation", await self.session_reset(session,
                                                                                    data))
                elif kind == "step":
                    await self.ws_send(send, "observation", await self.session_step(session,
                                                                                   data))
                elif kind == "state":
                    await self.ws_send(send, "state", session.state())
                else:
                    raise SessionError(f"unknown message type {str(kind)[:40]!r}; use reset, "
                                       "step, state or close", "UNKNOWN_TYPE")
            except json.JSONDecodeError:
                await self.ws_send(send, "error", {"message": "the message is not JSON",
                                                   "code": "INVALID_JSON"})
            except SessionError as error:
                await self.ws_send(send, "error", {"message": str(error), "code": error.code})

    @staticmethod
    async def ws_send(send, kind: str, data: dict[str, Any]) -> None:
        await send({"type": "websocket.send", "text": json.dumps({"type": kind, "data": data})})
