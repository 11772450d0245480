"""Host side of the guest protocol: bounded reads, per-call deadlines, request ids, log capture."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from sandbox_runner.errors import (
    SandboxError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
)
from sandbox_runner.replies import reply_answer, reply_parse, reply_step_values

READ_CHUNK = 64 * 1024
REPLY, LOG = "reply", "log"


class StreamClosed(SandboxError):
    """The reply stream ended: the guest exited or was killed."""


class Transport:
    """Byte streams to and from one guest: requests in, replies and log out."""

    # How long log output may trail a reply (separately copied streams can reorder).
    log_settle_seconds = 0.0
    # Readable once the sandbox's memory cgroup had to act (a v1 OOM eventfd).
    memory_alarm_fd: int | None = None
    poller: select.poll

    def add_memory_alarm(self, fd: int, message: str, confirm: Callable[[], bool]) -> None:
        """Make `receive` raise SandboxMemoryExceeded(message) once `fd` becomes readable and
        `confirm()` is true: the cgroup still exists (a v1 OOM eventfd also fires when its
        cgroup is removed, for example when a container exits; the kernel's OOM counters lag
        the signal, so they cannot tell the two apart yet)."""
        self.memory_alarm_fd = fd
        self.memory_alarm = (message, confirm)
        self.poller.register(fd, select.POLLIN)

    def check_memory_alarm(self) -> None:
        message, confirm = self.memory_alarm
        with contextlib.suppress(OSError):
            os.read(self.memory_alarm_fd, 8)
        if confirm():
            raise SandboxMemoryExceeded(message)
        self.poller.unregister(self.memory_alarm_fd)  # removed, not out of memory
        self.memory_alarm_fd = None

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def receive(self, timeout: float) -> list[tuple[str, bytes]]:
        """Return (stream, chunk) pairs that arrived within `timeout`; b"" on REPLY means EOF."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class PipeTransport(Transport):
    """The guest's stdin, stdout (replies) and stderr (log) as three pipes."""

    def __init__(self, stdin_fd: int, stdout_fd: int, stderr_fd: int) -> None:
        self.stdin_fd, self.stdout_fd, self.stderr_fd = stdin_fd, stdout_fd, stderr_fd
        self.streams = {stdout_fd: REPLY, stderr_fd: LOG}
        self.poller = select.poll()
        for fd in self.streams:
            self.poller.register(fd, select.POLLIN)

    def send(self, data: bytes) -> None:
        written = os.write(self.stdin_fd, data)
        if written < len(data):
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(self.stdin_fd, view):]

    def receive(self, timeout: float) -> list[tuple[str, bytes]]:
        events = self.poller.poll(max(timeout, 0.0) * 1000)
        if len(events) == 1 and events[0][0] == self.stdout_fd:  # the usual case: a reply
            return [(REPLY, os.read(self.stdout_fd, READ_CHUNK))]
        chunks = []
        for fd, _event in events:
            if fd == self.memory_alarm_fd:
                self.check_memory_alarm()
                continue
            chunk = os.read(fd, READ_CHUNK)
            if not chunk and fd == self.stderr_fd:
                self.poller.unregister(fd)
                continue
            chunks.append((self.streams[fd], chunk))
        return chunks

    def close(self) -> None:
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class MultiplexedSocketTransport(Transport):
    """A Docker attach socket: stdin in, stdout and stderr out in 8-byte-header frames."""

    log_settle_seconds = 0.05
    stdout_stream = REPLY

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pending = bytearray()
        self.frame_stream: str | None = None
        self.frame_left = 0
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self, timeout: float) -> list[tuple[str, bytes]]:
        if not self.poller.poll(max(timeout, 0.0) * 1000):
            return []
        return self.receive_frames()

    def receive_frames(self) -> list[tuple[str, bytes]]:
        """Read the attach socket once and split what arrived into (stream, chunk) pairs."""
        data = self.sock.recv(READ_CHUNK)
        if not data:
            return [(REPLY, b"")]
        self.pending += data
        chunks = []
        while self.pending:
            if self.frame_left == 0:
                if len(self.pending) < 8:
                    break
                kind, size = struct.unpack(">BxxxL", self.pending[:8])
                del self.pending[:8]
                self.frame_stream = self.stdout_stream if kind == 1 else LOG
                self.frame_left = size
                continue
            take = bytes(self.pending[: self.frame_left])
            del self.pending[: len(take)]
            self.frame_left -= len(take)
            chunks.append((self.frame_stream, take))
        return chunks

    def peer_closed(self) -> bool:
        """True once the attach stream has ended (the container exited), asked of the socket
        alone: no round trip to the engine, which may be busy starting other containers."""
        probe = select.poll()
        probe.register(self.sock.fileno(), select.POLLIN)
        if not probe.poll(0):
            return False
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class FifoTransport(MultiplexedSocketTransport):
    """Requests and replies over a FIFO pair; the attach socket carries only the log.

    The attach socket still signals the end: it closes when the container exits. The FIFO's own
    end of file is ignored (a child forked by the environment may hold it open anyway).
    """

    stdout_stream = LOG
    send_timeout = 10.0

    def __init__(self, sock: socket.socket, request_fd: int, reply_fd: int) -> None:
        super().__init__(sock)
        self.request_fd, self.reply_fd = request_fd, reply_fd
        self.socket_fd = sock.fileno()
        self.backlog: list[tuple[str, bytes]] = []
        self.poller = select.poll()
        self.poller.register(reply_fd, select.POLLIN)  # first: replies before the exit signal
        self.poller.register(self.socket_fd, select.POLLIN)
        os.set_blocking(request_fd, False)
        os.set_blocking(reply_fd, False)

    def wait_ready(self, timeout: float) -> None:
        """Wait for the guest's b"ready" line (it has opened both FIFOs); keep any log."""
        deadline = time.monotonic() + timeout
        received = b""
        while not received.endswith(b"ready\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxTimeout("the sandbox guest did not start in time")
            for stream, chunk in self.receive(remaining):
                if stream == REPLY and not chunk:
                    raise StreamClosed("the sandbox exited before it was ready")
                if stream == REPLY:
                    received += chunk
                else:
                    self.backlog.append((stream, chunk))
            if len(received) > 6:
                raise StreamClosed("the sandbox guest did not start cleanly")

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        deadline = None
        while view:
            try:
                view = view[os.write(self.request_fd, view):]
            except BlockingIOError:
                # The FIFO is full: the guest is not reading (stuck, or gone).
                deadline = deadline or time.monotonic() + self.send_timeout
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([], [self.request_fd], [], remaining)[1]:
                    raise OSError("the sandbox stopped reading requests") from None

    def receive(self, timeout: float) -> list[tuple[str, bytes]]:
        if self.backlog:
            chunks, self.backlog = self.backlog, []
            return chunks
        chunks = []
        for fd, _event in self.poller.poll(max(timeout, 0.0) * 1000):
            if fd == self.memory_alarm_fd:
                self.check_memory_alarm()
                continue
            if fd == self.reply_fd:
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                if chunk:
                    chunks.append((REPLY, chunk))
                else:
                    self.poller.unregister(fd)
            else:
                chunks += self.receive_frames()
        return chunks

    def close(self) -> None:
        super().close()
        for fd in (self.request_fd, self.reply_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


# Requests are encoded with json's C helper directly (the step round trip is the hot path).
ENCODE_STRING = json.encoder.encode_basestring_ascii


def encode_body(message: dict[str, Any]) -> bytes:
    """Return a request line without its id: ',"key":value...}' plus a newline, all ASCII."""
    parts = []
    for key, value in message.items():
        if type(value) is str:
            parts += [',"', key, '":', ENCODE_STRING(value)]
        elif type(value) is int:
            parts += [',"', key, '":', str(value)]
        else:
            parts += [',"', key, '":', json.dumps(value)]
    parts.append("}\n")
    return "".join(parts).encode("ascii")


class Channel:
    """Sends requests and waits for the matching reply, enforcing every byte and time limit."""

    def __init__(self, transport: Transport, *, max_reply_bytes: int, max_log_bytes: int,
                 max_observation_bytes: int = 64 * 1024) -> None:
        self.transport = transport
        self.max_reply_bytes = max_reply_bytes
        self.max_observation_bytes = max_observation_bytes
        self.max_log_bytes = max_log_bytes
        self.id_prefix = secrets.token_hex(4) + "-"
        self.sequence = 0
        self.replies = bytearray()
        self.log_parts: list[bytes] = []
        self.log_size = 0
        self.closed = False

    @property
    def log_text(self) -> str:
        return b"".join(self.log_parts).decode("utf-8", "replace")

    def call(self, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send `message`; return the `ok` reply, or raise the error that matches the failure."""
        return self.exchange(encode_body(message), deadline, deadline - time.monotonic())

    def exchange(self, body: bytes, deadline: float, timeout: float) -> dict[str, Any]:
        """Send a request whose line after the id is `body` (see encode_body); `timeout` is
        `deadline` minus now, which the caller has at hand."""
        request_id, line = self.send_and_read(body, deadline, timeout)
        return self.checked_reply(request_id, line)

    def exchange_step(self, body: bytes, deadline: float,
                      timeout: float) -> tuple[str, bool, bool, float]:
        """Send a step request; return (observation, done, success, reward) from its reply,
        every value checked (see replies.py)."""
        request_id, line = self.send_and_read(body, deadline, timeout)
        return reply_step_values(line, request_id, self.max_observation_bytes)

    def send_and_read(self, body: bytes, deadline: float, timeout: float) -> tuple[str, bytes]:
        """Send one request; return its id and the next reply line (newline included)."""
        self.sequence += 1
        request_id = self.id_prefix + str(self.sequence)
        try:
            self.transport.send(b'{"id":"' + request_id.encode() + b'"' + body)
        except OSError as error:
            raise StreamClosed(f"could not send to the sandbox: {error}") from error
        line = None
        if not self.replies:
            # Fast path: the whole reply arrives alone, as one chunk ending in its newline.
            chunks = self.transport.receive(timeout)
            if len(chunks) == 1:
                stream, line = chunks[0]
                if stream != REPLY or not line or line.find(b"\n") != len(line) - 1:
                    line = None
            if line is None:
                self.absorb(chunks)
        return request_id, line or self.read_line(deadline)

    def checked_reply(self, request_id: str, line: bytes) -> dict[str, Any]:
        """Parse a reply line; return it when it answers `request_id` and is `ok`, else raise."""
        return reply_answer(reply_parse(line), request_id)

    def read_line(self, deadline: float) -> bytes:
        """Return the next reply line, newline included."""
        while True:
            newline = self.replies.find(b"\n")
            if newline >= 0:
                line = bytes(self.replies[: newline + 1])
                del self.replies[: newline + 1]
                return line
            if len(self.replies) > self.max_reply_bytes:
                raise SandboxOutputExceeded(
                    f"a reply grew past {self.max_reply_bytes} bytes without ending"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxTimeout("the environment did not answer in time")
            self.pump(remaining)

    def pump(self, timeout: float) -> None:
        """Move whatever arrives within `timeout` into the reply buffer or the log."""
        self.absorb(self.transport.receive(timeout))

    def absorb(self, chunks: list[tuple[str, bytes]]) -> None:
        for stream, chunk in chunks:
            if stream == REPLY:
                if not chunk:
                    raise StreamClosed("the sandbox closed its reply stream")
                self.replies += chunk
                if len(self.replies) > self.max_reply_bytes and b"\n" not in chunk:
                    raise SandboxOutputExceeded(
                        f"a reply grew past {self.max_reply_bytes} bytes without ending"
                    )
            else:
                self.log_size += len(chunk)
                if self.log_size > self.max_log_bytes:
                    raise SandboxOutputExceeded(
                        f"the environment printed more than {self.max_log_bytes} bytes"
                    )
                self.log_parts.append(chunk)

    def settle_log(self) -> None:
        """Read log output that may still trail the last reply, until it goes quiet."""
        quiet_for = self.transport.log_settle_seconds
        size = -1
        while size != self.log_size:
            size = self.log_size
            self.pump(quiet_for)

    def drain_log(self, timeout: float) -> None:
        """Collect log output until the streams close or `timeout` passes (used at close)."""
        deadline = time.monotonic() + timeout
        try:
            while (remaining := deadline - time.monotonic()) > 0:
                self.pump(remaining)
        except SandboxError:
            pass
