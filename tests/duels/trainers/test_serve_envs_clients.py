"""`manage.py serve_envs` bounded per client, seen on the wire of a real server: a refused
session gets close code 1013 (not 1011) and the server logs no traceback; one address holds at
most --max-sessions-per-client sessions and resets at most --resets-per-minute times a minute
(others are not held back); a client that sends without reading is cut once its unread replies
pass --max-buffer-kb, and the server stays small; a session that only asks for its state is
closed after the idle timeout."""

from __future__ import annotations

import asyncio
import http.client
import json
import time

import pytest

from duels.trainers.client_limits import ClientLimits
from duels.trainers.openenv_server import EnvServer, ServedDesign
from tests.duels.management.test_serve import free_port
from tests.duels.trainers.rl_sets import SOURCE
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.parts import need
from tests.helpers.raw_websocket import RawWebSocket
from tests.helpers.web_server import memory_kib, one_design_export, serve_envs_start

BUFFER_KB = 256
FLOOD_MESSAGES = 150_000
GROWTH_LIMIT_BYTES = 12 * 2**20


@pytest.fixture
def server(tmp_path, db):
    need(sandbox_works(), "no sandbox backend works here")
    export = one_design_export(tmp_path / "export", SOURCE.format(modulus=3))
    port = free_port()
    process = serve_envs_start("--port", str(port), "--from", str(export), "--max-sessions",
                               "4", "--max-sessions-per-client", "2", "--resets-per-minute",
                               "3", "--max-buffer-kb", str(BUFFER_KB), "--idle-timeout", "60")
    yield process, port
    process.terminate()
    _, errors = process.communicate(timeout=30)
    assert b"Traceback" not in errors, errors.decode()[-3000:]


def state(ws: RawWebSocket) -> dict:
    ws.send(json.dumps({"type": "state"}))
    return json.loads(ws.receive()[1])


def test_sessions_per_address_and_in_all_are_refused_with_1013_on_the_wire(server):
    _, port = server
    first = [RawWebSocket(port, source="127.0.0.1") for _ in range(2)]
    assert all(state(ws)["type"] == "state" for ws in first)
    # A third from the same address: its own share is taken.
    third = RawWebSocket(port, source="127.0.0.1")
    texts, code = third.close_code()
    assert code == 1013
    error = json.loads(texts[0])["data"]
    assert error["code"] == "CAPACITY_REACHED" and "this address already has 2" in error["message"]
    # Another address is not held back by the first one's sessions...
    others = [RawWebSocket(port, source="127.0.0.2") for _ in range(2)]
    assert all(state(ws)["type"] == "state" for ws in others)
    # ...until every slot is taken.
    late = RawWebSocket(port, source="127.0.0.3")
    texts, code = late.close_code()
    assert code == 1013 and "all 4 sessions are in use" in texts[0]
    for ws in [*first, third, *others, late]:
        ws.close()


def test_resets_per_address_are_limited_per_minute(server):
    _, port = server
    ws = RawWebSocket(port, source="127.0.0.4")
    replies = []
    for seed in range(4):
        ws.send(json.dumps({"type": "reset", "data": {"seed": seed}}))
        replies.append(json.loads(ws.receive()[1]))
    assert [reply["type"] for reply in replies] == ["observation"] * 3 + ["error"]
    assert replies[3]["data"]["code"] == "CAPACITY_REACHED"
    assert "reset 3 times in the last minute" in replies[3]["data"]["message"]
    assert state(ws)["type"] == "state"  # the session lives on
    ws.close()
    # A stateless reset from the same address waits too, with Retry-After.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                            source_address=("127.0.0.4", 0))
    connection.request("POST", "/reset", body=b"{}")
    refused = connection.getresponse()
    assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "--resets-per-minute" in json.loads(refused.read())["detail"]
    connection.close()
    # Another address resets at once.
    other = RawWebSocket(port, source="127.0.0.5")
    other.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
    assert json.loads(other.receive()[1])["type"] == "observation"
    other.close()


def test_a_client_that_never_reads_is_cut_at_the_buffer_cap(server):
    process, port = server
    ws = RawWebSocket(port, source="127.0.0.6")
    # Each state reply carries the 200-character episode id: about 350 bytes.
    ws.send(json.dumps({"type": "reset", "data": {"seed": 1, "episode_id": "e" * 200}}))
    assert json.loads(ws.receive()[1])["type"] == "observation"
    before = memory_kib(process.pid, "VmRSS")
    peak_before = memory_kib(process.pid, "VmHWM")
    flood = RawWebSocket.frame(json.dumps({"type": "state"})) * 10_000
    cut = False
    started = time.monotonic()
    try:
        for _ in range(FLOOD_MESSAGES // 10_000):
            ws.sock.sendall(flood)
    except (BrokenPipeError, ConnectionResetError):
        cut = True
    if not cut:  # everything was sent: a server that cuts the session does so within 30 s
        ws.sock.settimeout(30)
        try:
            while ws.sock.recv(1 << 20):
                pass
            cut = True
        except ConnectionResetError:
            cut = True
        except TimeoutError:
            cut = False
    seconds = time.monotonic() - started
    time.sleep(0.5)
    growth = (max(memory_kib(process.pid, "VmHWM"), peak_before) - before) * 1024
    print(f"unread session: cut after {seconds:.1f} s, server grew {growth / 2**20:.1f} MB")
    assert cut
    assert growth < GROWTH_LIMIT_BYTES
    ws.close()
    # The server serves the next client as before.
    fresh = RawWebSocket(port, source="127.0.0.7")
    assert state(fresh)["type"] == "state"
    fresh.close()


def test_client_limits_bookkeeping():
    now = [100.0]
    limits = ClientLimits(max_sessions=1, resets_per_minute=2, clock=lambda: now[0])
    limits.take("a")
    assert limits.refusal("a") and not limits.refusal("b")
    limits.give_back("a")
    assert not limits.refusal("a") and limits.slots == {}
    assert [limits.reset_wait("a") for _ in range(3)] == [0, 0, 60]
    now[0] += 61
    assert limits.reset_wait("a") == 0


def test_a_session_that_only_asks_for_its_state_is_closed_when_idle():
    app = EnvServer(designs=[ServedDesign(id="d" * 64, source="", max_steps=5)],
                    idle_timeout=0.5)
    queue: asyncio.Queue = asyncio.Queue()
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def client() -> float:
        started = asyncio.get_running_loop().time()
        queue.put_nowait({"type": "websocket.connect"})
        task = asyncio.ensure_future(app({"type": "websocket", "path": "/ws",
                                          "client": ["127.0.0.1", 1]}, queue.get, send))
        while not task.done():
            queue.put_nowait({"type": "websocket.receive", "text": '{"type": "state"}'})
            await asyncio.sleep(0.1)
        return asyncio.get_running_loop().time() - started

    seconds = asyncio.run(asyncio.wait_for(client(), timeout=10))
    assert seconds < 5
    assert sent[-1] == {"type": "websocket.close", "code": 1000}
    assert "without a reset or a step" in json.loads(sent[-2]["text"])["data"]["message"]


def test_the_setter_seat_limits_resets_per_address_as_the_solver_seat_does():
    """`serve_envs --role setter --resets-per-minute N`: each reset leads to a scored answer
    (solver plays), so an address resets at most N times a minute there too."""
    import asyncio

    from duels.trainers.openenv_server import EnvSession, SessionError
    from duels.trainers.setter_server import SetterServer

    class Seat:
        solvers: list = []
        seeds = 1

        def prompt(self, *, digests):
            return [{"role": "user", "content": "write an environment"}]

    server = SetterServer(seat=Seat())
    server.clients.resets_per_minute = 2
    session, other = EnvSession(number=1, client="127.0.0.6"), EnvSession(number=2,
                                                                           client="127.0.0.7")

    async def resets():
        replies = [await server.session_reset(session, {}) for _ in range(2)]
        with pytest.raises(SessionError, match="reset 2 times in the last minute"):
            await server.session_reset(session, {})
        replies.append(await server.session_reset(other, {}))
        return replies

    assert all(reply["observation"]["text"] == "write an environment"
               for reply in asyncio.run(resets()))
