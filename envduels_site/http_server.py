"""Daphne with request bodies refused before they are buffered, every registered websocket
close code and, where asked, a bound on what a websocket holds: the web process and
`manage.py serve_envs` both run this server.

Daphne (4.x) hands a request to the application only after Twisted has read its whole body
(into memory, or a temporary file past 100 kB), and then queues the body to the application
at once, so a cap in the application or in an ASGI middleware comes too late: a 300 MB POST
grew the web process by 300 MB before its 413, and a client that sent half of a declared
200 MB body and held the connection kept a 100 MB temporary file open. The cap belongs where
the bytes arrive, in the HTTP layer: a request whose declared `Content-Length` is over its
path's cap is answered 413 before one byte of its body is read, a chunked body is cut off
with 413 as soon as its bytes pass the cap, and the connection is closed either way.

Websockets: Daphne closes through autobahn's application call `sendClose`, which accepts only
1000 and 3000–4999, so an application's 1013 (try again later) became a traceback and a 1011
on the wire; the registered codes go out through the protocol's own close frame instead. With
`websocket_outbound_max`, a connection whose client does not read is cut once the bytes
waiting to be sent pass it; with `websocket_inbound_max`, reading pauses while that many
messages wait for the application, so a client that sends faster than the application answers
is slowed down instead of being buffered.

`python -m envduels_site.http_server` takes Daphne's own command line (`manage.py serve`
starts it so); `BoundedServer` is Daphne's `Server` with a `body_limits` argument.
"""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass

from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server
from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol

KIB = 1024
MIB = 1024 * KIB
# After a refusal the server reads on and drops what the client is still sending, for at most
# this long and this many bytes (as nginx's lingering close does), so the client reads the 413
# instead of a connection reset; then the connection is cut.
LINGER_SECONDS = 2.0
LINGER_BYTES = 16 * MIB


@dataclass(frozen=True)
class BodyLimits:
    """How large a request body may be: `default` bytes, or more under a few path prefixes.

    Bodies over `default` (allowed only under `larger`) are held by at most `larger_at_once`
    requests at a time; one more is answered 503, so a handful of large uploads is the most
    such bodies can ever weigh together.
    """

    default: int
    larger: tuple[tuple[str, int], ...] = ()
    larger_at_once: int = 2
    json_errors: bool = False
    advice: str = ""

    def cap_for(self, path: str) -> int:
        for prefix, cap in self.larger:
            if path.startswith(prefix):
                return cap
        return self.default


def web_body_limits() -> BodyLimits:
    """The web process's limits, from settings (docs/security.md)."""
    from django.conf import settings

    return BodyLimits(
        default=settings.ENVDUELS_REQUEST_BODY_MAX_KB * KIB,
        larger=(("/import/", settings.ENVDUELS_IMPORT_UPLOAD_MAX_MB * MIB),
                ("/panels/import/", settings.ENVDUELS_IMPORT_UPLOAD_MAX_MB * MIB)),
        larger_at_once=2,
        advice=" (ENVDUELS_REQUEST_BODY_MAX_KB; an upload to /import/ or /panels/import/: "
               "ENVDUELS_IMPORT_UPLOAD_MAX_MB, or `manage.py import FILE` on the server)",
    )


def size_text(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size // KIB} KiB" \
        if size % KIB == 0 else f"{size} bytes"


class BoundedRequest(WebRequest):
    """Daphne's request, counting its body's bytes as they arrive."""

    body_cap = 0
    body_seen = 0
    body_refused = False
    body_dropped = 0
    holds_large_slot = False

    @property
    def bounded_server(self) -> BoundedServer:
        return self.channel.factory.server

    def gotLength(self, length: int | None) -> None:  # noqa: N802 (Twisted's name)
        limits = self.bounded_server.body_limits
        # The request line is parsed, but Twisted gives it to the request only at the end of
        # the body; the channel holds it until then.
        raw_path = getattr(self.channel, "_path", b"") or b""
        path = raw_path.split(b"?", 1)[0].decode("latin-1")
        self.body_cap = limits.cap_for(path)
        if length is not None and length > self.body_cap:
            self.refuse(413, f"request body too large: {length:,} bytes declared, at most "
                             f"{size_text(self.body_cap)} here{limits.advice}")
            return
        if length is not None and length > limits.default and not self.take_large_slot():
            return
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:  # noqa: N802 (Twisted's name)
        if self.body_refused:
            self.body_dropped += len(data)
            if self.body_dropped > LINGER_BYTES and self.channel.transport is not None:
                self.channel.transport.abortConnection()
            return
        self.body_seen += len(data)
        limits = self.bounded_server.body_limits
        if self.body_seen > self.body_cap:
            self.refuse(413, f"request body too large: more than {size_text(self.body_cap)} "
                             f"sent, at most {size_text(self.body_cap)} here{limits.advice}")
            return
        if self.body_seen > limits.default and not self.holds_large_slot \
                and not self.take_large_slot():
            return
        super().handleContentChunk(data)

    def take_large_slot(self) -> bool:
        server = self.bounded_server
        if server.large_bodies >= server.body_limits.larger_at_once:
            self.refuse(503, f"{server.body_limits.larger_at_once} large uploads are in "
                             "progress; retry in a minute")
            return False
        server.large_bodies += 1
        self.holds_large_slot = True
        return True

    def release_large_slot(self) -> None:
        if self.holds_large_slot:
            self.holds_large_slot = False
            self.bounded_server.large_bodies -= 1

    def refuse(self, status: int, message: str) -> None:
        """Answer now, read nothing more and close: the body is never held."""
        self.body_refused = True
        self.release_large_slot()
        if getattr(self, "content", None) is not None:
            self.content.close()  # a temporary file's space is given back at once
        self.content = io.BytesIO()
        # Twisted would answer `Expect: 100-continue` after this: the client must not send.
        self.requestHeaders.removeHeader(b"Expect")
        if self.bounded_server.body_limits.json_errors:
            body, kind = json.dumps({"detail": message}).encode(), b"application/json"
        else:
            body, kind = message.encode() + b"\n", b"text/plain; charset=utf-8"
        reason = {413: b"Content Too Large", 503: b"Service Unavailable"}[status]
        transport = self.channel.transport
        if transport is None:
            return
        transport.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n%s" % (status, reason, kind, len(body), body))
        # The answer, then FIN; what still arrives is dropped until the client closes.
        transport.loseWriteConnection()
        from twisted.internet import reactor

        reactor.callLater(LINGER_SECONDS, transport.abortConnection)

    def requestReceived(self, command, path, version) -> None:  # noqa: N802 (Twisted's name)
        if not self.body_refused:  # a refused request has been answered: never process it
            super().requestReceived(command, path, version)

    def finish(self) -> None:
        self.release_large_slot()
        super().finish()

    def connectionLost(self, reason) -> None:  # noqa: N802 (Twisted's name)
        self.release_large_slot()
        super().connectionLost(reason)


class BoundedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr):  # noqa: N802 (Twisted's name)
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = BoundedRequest
        return protocol


def pending_bytes(transport) -> int:
    """Bytes a Twisted transport holds that the peer has not taken yet."""
    buffered = len(getattr(transport, "dataBuffer", b"")) - getattr(transport, "offset", 0)
    return buffered + getattr(transport, "_tempDataLen", 0)


class BoundedWebSocketProtocol(WebSocketProtocol):
    """Daphne's websocket: registered close codes, and the server's buffer bounds."""

    cut = False
    reading_paused = False

    def serverClose(self, code: int | None = None) -> None:  # noqa: N802 (Daphne's name)
        code = 1000 if code is None else code
        if code in self.CLOSE_STATUS_CODES_ALLOWED:  # 1000–1003, 1007–1013 (RFC 6455, IANA)
            self.sendCloseFrame(code=code, isReply=False)
        else:
            self.sendClose(code=code)

    def serverSend(self, content, binary: bool = False) -> None:  # noqa: N802 (Daphne's name)
        if self.cut:
            return
        super().serverSend(content, binary)
        limit = self.server.websocket_outbound_max
        if limit and self.transport is not None and pending_bytes(self.transport) > limit:
            # The client does not read: what waits for it is dropped with the connection.
            self.cut = True
            self.transport.abortConnection()

    def onMessage(self, payload, isBinary) -> None:  # noqa: N802 (autobahn's name)
        super().onMessage(payload, isBinary)
        limit = self.server.websocket_inbound_max
        queue = getattr(self, "application_queue", None)
        if limit and queue is not None and not self.reading_paused \
                and queue.qsize() >= limit and self.transport is not None:
            self.reading_paused = True
            self.transport.pauseProducing()
            self.resume_when_drained()

    def resume_when_drained(self) -> None:
        from twisted.internet import reactor

        if self.state == self.STATE_CLOSED or self.transport is None:
            return
        if self.application_queue.qsize() >= max(1, self.server.websocket_inbound_max // 2):
            reactor.callLater(0.02, self.resume_when_drained)
            return
        self.reading_paused = False
        self.transport.resumeProducing()


class BoundedServer(Server):
    """Daphne's server whose HTTP requests are `BoundedRequest`s and whose websockets are
    `BoundedWebSocketProtocol`s."""

    def __init__(self, *args, body_limits: BodyLimits | None = None,
                 websocket_outbound_max: int = 0, websocket_inbound_max: int = 0,
                 **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.body_limits = body_limits or web_body_limits()
        self.large_bodies = 0
        self.websocket_outbound_max = websocket_outbound_max
        self.websocket_inbound_max = websocket_inbound_max

    # Daphne builds its HTTP factory inside run(), with no way to choose it: this property
    # keeps ours in its place.
    @property
    def http_factory(self) -> BoundedHTTPFactory:
        return self._http_factory

    @http_factory.setter
    def http_factory(self, _daphne_factory: HTTPFactory) -> None:
        self._http_factory = BoundedHTTPFactory(self)

    @property
    def ws_factory(self) -> WebSocketFactory:
        return self._ws_factory

    @ws_factory.setter
    def ws_factory(self, factory: WebSocketFactory) -> None:
        factory.protocol = BoundedWebSocketProtocol
        self._ws_factory = factory


class BoundedCommandLine(CommandLineInterface):
    server_class = BoundedServer


def main(argv: list[str] | None = None) -> None:
    BoundedCommandLine().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
