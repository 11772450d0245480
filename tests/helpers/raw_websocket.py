"""A websocket client on a plain socket, for tests that must see the wire itself: the close
code a server sends, or a client that sends and never reads."""

from __future__ import annotations

import base64
import os
import socket
import struct


class RawWebSocket:
    """One client connection from `source` (an address on the loopback range) to a server."""

    def __init__(self, port: int, path: str = "/ws", *, source: str = "127.0.0.1",
                 timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                             source_address=(source, 0))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket"
                          f"\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                          "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the server closed during the handshake")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ", 2)[1])

    @staticmethod
    def frame(text: str) -> bytes:
        """A masked text frame, as a client sends it."""
        payload, mask = text.encode(), os.urandom(4)
        size = len(payload)
        head = struct.pack("!B", 0x81)
        if size < 126:
            head += struct.pack("!B", 0x80 | size)
        elif size < 65536:
            head += struct.pack("!BH", 0x80 | 126, size)
        else:
            head += struct.pack("!BQ", 0x80 | 127, size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return head + mask + masked

    def send(self, text: str) -> None:
        self.sock.sendall(self.frame(text))

    def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def receive(self) -> tuple[int, bytes]:
        """The next frame: (opcode, payload); opcode 8 is a close frame."""
        first, second = self._read(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", self._read(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self._read(8))[0]
        return first & 0x0F, self._read(size)

    def close_code(self) -> tuple[list[str], int | None]:
        """Read to the close frame: the text messages before it, and its code."""
        texts = []
        while True:
            opcode, payload = self.receive()
            if opcode == 8:
                return texts, struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            if opcode == 1:
                texts.append(payload.decode())

    def close(self) -> None:
        self.sock.close()
