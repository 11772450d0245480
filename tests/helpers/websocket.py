"""A websocket handshake and a read of the server's first frame, over a plain socket.

The ASGI communicator reports the code a consumer closes with, whatever a real server would
send; this client sees what a script or browser gets from Daphne: the handshake's HTTP status,
and after a `101` the frames on the wire (RFC 6455: the server's frames are not masked).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
from dataclasses import dataclass


@dataclass
class Opened:
    status: int  # the handshake's HTTP status: 101 when upgraded
    close_code: int | None = None  # the code of a close frame, if the first frame was one
    message: dict | None = None  # the first text frame, decoded, if it was one


def _read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection mid-frame")
        data += chunk
    return data


def _read_head(sock: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    return head


def _read_frame(sock: socket.socket) -> tuple[int, bytes]:
    first, second = _read_exactly(sock, 2)
    length = second & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", _read_exactly(sock, 2))
    elif length == 127:
        (length,) = struct.unpack("!Q", _read_exactly(sock, 8))
    return first & 0x0F, _read_exactly(sock, length)


def open_websocket(host: str, port: int, path: str, *, origin: str | None = None,
                   token: str | None = None, timeout: float = 10.0) -> Opened:
    """Open `ws://host:port/path`, then read the first frame the server sends."""
    headers = [
        f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket",
        "Connection: Upgrade", "Sec-WebSocket-Version: 13",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
    ]
    if origin is not None:
        headers.append(f"Origin: {origin}")
    if token is not None:
        headers.append(f"Authorization: Bearer {token}")
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        status_line = _read_head(sock).split(b"\r\n", 1)[0].decode()
        status = int(status_line.split()[1])
        if status != 101:
            return Opened(status)
        opcode, payload = _read_frame(sock)
        if opcode == 0x8:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            return Opened(status, close_code=code)
        return Opened(status, message=json.loads(payload) if opcode == 0x1 else None)
