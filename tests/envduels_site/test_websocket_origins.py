"""Websocket origins must match exactly, port included (not just an allowed host name)."""

from __future__ import annotations

import pytest
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from envduels_site.origins import ExactOriginValidator, websocket_origin_allowed

pytestmark = pytest.mark.asyncio

HOSTS = ["localhost", "127.0.0.1", "envduels.example.org"]


class Accept(AsyncWebsocketConsumer):
    async def connect(self):
        await self.accept()


async def opens(application, *, origin: str | None, host: str = "localhost:8000") -> bool:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    communicator = WebsocketCommunicator(application, "/ws/episodes/x/", headers=headers)
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


@override_settings(ALLOWED_HOSTS=HOSTS, CSRF_TRUSTED_ORIGINS=["https://envduels.example.org"])
@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        ("http://localhost:8000", "localhost:8000", True),
        ("http://LOCALHOST:8000", "localhost:8000", True),
        ("http://localhost", "localhost:80", True),
        ("https://envduels.example.org", "10.0.0.5:8000", True),  # trusted, behind a proxy
        ("http://localhost:9999", "localhost:8000", False),  # another port of an allowed host
        ("http://localhost:8000", "localhost:9999", False),
        ("http://127.0.0.1:8000", "localhost:8000", False),
        ("http://evil.example:8000", "evil.example:8000", False),  # host not allowed
        ("https://envduels.example.org:8443", "10.0.0.5:8000", False),
        ("null", "localhost:8000", False),
        (None, "localhost:8000", False),
    ],
)
async def test_only_the_exact_origin_opens_a_websocket(origin, host, allowed):
    assert websocket_origin_allowed(origin=origin, host=host) is allowed
    assert await opens(ExactOriginValidator(Accept.as_asgi()), origin=origin, host=host) is allowed


@override_settings(ALLOWED_HOSTS=HOSTS)
async def test_the_site_uses_the_exact_check():
    from envduels_site.asgi import application

    assert not await opens(application, origin="http://localhost:9999", host="localhost:8000")
