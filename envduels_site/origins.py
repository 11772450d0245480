"""Websocket origin check: exactly the page's own origin (host and port), or a trusted origin.

Channels' `AllowedHostsOriginValidator` compares only the host name with ALLOWED_HOSTS, so a page
served from any port of an allowed host (`http://localhost:9999`) could open the replay stream
with a signed-in viewer's cookies. Here the Origin must name the very host and port the
websocket was opened on (its Host header, itself an allowed host), or be listed exactly in
DJANGO_CSRF_TRUSTED_ORIGINS (for a proxy that serves the site under another name).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_port(netloc: str, *, scheme: str) -> tuple[str, int] | None:
    """(lower-case host, port) of `netloc`, the scheme's default port when none is given."""
    host, port = split_domain_port(netloc.lower())
    if not host:
        return None
    if not port:
        return host, DEFAULT_PORTS[scheme]
    return (host, int(port)) if port.isdigit() else None


def websocket_origin_allowed(*, origin: str | None, host: str | None) -> bool:
    """True when `origin` is the page's own origin for a request to `host`, or trusted."""
    if not origin:
        return False
    parsed = urlsplit(origin)
    if parsed.scheme not in DEFAULT_PORTS or not parsed.netloc:
        return False
    trusted = {entry.lower().rstrip("/") for entry in settings.CSRF_TRUSTED_ORIGINS}
    if origin.lower().rstrip("/") in trusted:
        return True
    if not host:
        return False
    mine = _host_port(host, scheme=parsed.scheme)
    theirs = _host_port(parsed.netloc, scheme=parsed.scheme)
    if mine is None or theirs is None or mine != theirs:
        return False
    return validate_host(mine[0], settings.ALLOWED_HOSTS)


def bearer_token(scope: dict) -> str | None:
    """The token of an `Authorization: Bearer …` header on a websocket handshake, if any."""
    value = dict(scope.get("headers", [])).get(b"authorization", b"").decode("latin-1")
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class ExactOriginValidator:
    """ASGI middleware: deny a websocket whose Origin is not exactly allowed (see module)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        headers = dict(scope.get("headers", []))
        origin = headers.get(b"origin", b"").decode("latin-1") or None
        host = headers.get(b"host", b"").decode("latin-1") or None
        if websocket_origin_allowed(origin=origin, host=host):
            return await self.application(scope, receive, send)
        if origin is None and bearer_token(scope) is not None:
            # A script with an API token: browsers always send an Origin and cannot set this
            # header, so no page can borrow a viewer's rights this way. The token alone signs
            # it in; a session cookie sent along is dropped.
            headers = [(name, value) for name, value in scope.get("headers", [])
                       if name != b"cookie"]
            return await self.application({**scope, "headers": headers}, receive, send)
        return await WebsocketDenier()(scope, receive, send)
