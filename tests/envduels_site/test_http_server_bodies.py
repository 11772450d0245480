"""Request bodies are refused before they are buffered, in the web process and in
`manage.py serve_envs` alike: real server processes get a declared 300 MB body, a chunked body
past the cap and a half-sent body held open, answer 413 while the client still holds the rest,
and grow by less than 10 MB; bodies the cap allows still arrive whole."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import socket
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from duels.trainers.openenv_server import MAX_MESSAGE_BYTES
from tests.duels.management.test_serve import free_port, wait_until_up
from tests.duels.trainers.rl_sets import SOURCE
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.parts import need
from tests.helpers.web_server import (
    memory_kib,
    one_design_export,
    serve_envs_start,
    web_server_start,
)

ROOT = Path(__file__).resolve().parents[2]
GROWTH_LIMIT_BYTES = 10 * 2**20
DECLARED = 300 * 10**6


def read_response(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """What the server answers within `timeout` seconds (b"" when it answers nothing)."""
    sock.setblocking(False)
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.1)
        if not ready:
            if b"\r\n\r\n" in data:
                break
            continue
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BlockingIOError):
            break
        if not chunk:
            break
        data += chunk
    sock.setblocking(True)
    return data


def declared_post(port: int, path: str, *, length: int,
                  send: int = 0) -> tuple[bytes, socket.socket]:
    """POST with `Content-Length: length`, send `send` bytes of the body, keep the socket open."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                 f"application/octet-stream\r\nContent-Length: {length}\r\n\r\n".encode())
    if send:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"x" * send)
    return read_response(sock), sock


def chunked_post(port: int, path: str, *, total: int) -> bytes:
    """POST a chunked body of up to `total` bytes, stopping when the server closes."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                 "\r\n".encode())
    piece = b"%x\r\n%s\r\n" % (65536, b"y" * 65536)
    answer = b""
    try:
        for _ in range(total // 65536):
            sock.sendall(piece)
            ready, _, _ = select.select([sock], [], [], 0)
            if ready:
                answer = read_response(sock, timeout=2)
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = answer or read_response(sock, timeout=5)
    sock.close()
    return answer


def status_of(answer: bytes) -> int | None:
    found = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(found.group(1)) if found else None


def open_fds_to_deleted_files(pid: int) -> list[str]:
    found = []
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.endswith("(deleted)"):
            found.append(target)
    return found


def check_bodies_refused(pid: int, port: int, path: str, *, cap: int) -> None:
    # A first refusal loads the code that refusing uses.
    answer, sock = declared_post(port, path, length=cap + 1)
    sock.close()
    assert status_of(answer) == 413, answer[:400]
    before = memory_kib(pid, "VmRSS")
    peak_before = memory_kib(pid, "VmHWM")
    # Refused on the declared length, while the client still holds the 300 MB.
    answer, sock = declared_post(port, path, length=DECLARED, send=64 * 1024)
    assert status_of(answer) == 413, answer[:400]
    assert b"request body too large" in answer and b"300,000,000 bytes declared" in answer
    assert not open_fds_to_deleted_files(pid)
    sock.close()
    # Half of a declared 200 MB, held open: answered at once, no temporary file kept.
    answer, held = declared_post(port, path, length=200 * 10**6, send=4 * 2**20)
    assert status_of(answer) == 413, answer[:400]
    assert not open_fds_to_deleted_files(pid)
    held.close()
    # A chunked body says no length: it is cut off once its bytes pass the cap.
    answer = chunked_post(port, path, total=cap + 2 * 2**20)
    assert status_of(answer) == 413, answer[:400]
    assert b"more than" in answer
    time.sleep(0.5)
    growth = (max(memory_kib(pid, "VmHWM"), peak_before) - before) * 1024
    print(f"{path}: grew {growth / 2**20:.1f} MB")
    assert growth < GROWTH_LIMIT_BYTES


@pytest.mark.django_db
def test_the_web_process_refuses_bodies_before_buffering_them():
    if connection.vendor != "sqlite":
        pytest.skip("the server process shares the SQLite test database file")
    port = free_port()
    server = web_server_start(port)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz", time.monotonic() + 60)
        check_bodies_refused(server.pid, port, "/accounts/login/",
                             cap=settings.ENVDUELS_REQUEST_BODY_MAX_KB * 1024)
        check_bodies_refused(server.pid, port, "/import/",
                             cap=settings.ENVDUELS_IMPORT_UPLOAD_MAX_MB * 2**20)
        # An import upload may be larger than other bodies, two at a time: a third waits.
        held = [declared_post(port, "/import/", length=4 * 2**20, send=2 * 2**20)
                for _ in range(2)]
        assert [answer for answer, _ in held] == [b"", b""]
        answer, third = declared_post(port, "/import/", length=4 * 2**20)
        assert status_of(answer) == 503 and b"retry" in answer
        for _, sock in [*held, (None, third)]:
            sock.close()
        time.sleep(0.3)
        # A body within the cap still reaches the application (a sign-in form: 200 or 403).
        answer, sock = declared_post(port, "/accounts/login/", length=10, send=10)
        sock.close()
        assert status_of(answer) in (200, 302, 403), answer[:300]
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    assert b"Traceback" not in errors, errors.decode()[-3000:]


@pytest.mark.django_db
def test_serve_envs_refuses_bodies_before_buffering_them(tmp_path):
    need(sandbox_works(), "no sandbox backend works here")
    export = one_design_export(tmp_path / "export", SOURCE.format(modulus=3))
    port = free_port()
    server = serve_envs_start("--port", str(port), "--from", str(export))
    try:
        check_bodies_refused(server.pid, port, "/reset", cap=MAX_MESSAGE_BYTES)
        answer, sock = declared_post(port, "/reset", length=DECLARED)
        sock.close()
        body = answer.split(b"\r\n\r\n", 1)[1]
        assert json.loads(body)["detail"].startswith("request body too large")
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    assert b"Traceback" not in errors, errors.decode()[-3000:]
