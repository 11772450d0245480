"""A websocket that connects while the database or Redis is away (restarting) is accepted and
closed with 1013, "try again later", which the viewers' scripts retry; never an HTTP 500. The
outages are real: the database driver and the Redis client fail to reach a closed port (or an
unreachable file) on this machine."""

from __future__ import annotations

import contextlib
import socket

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.test import override_settings

from envduels_site.handshakes import CLOSE_TRY_AGAIN_LATER
from tests.helpers.study_data import played_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

HOST = "localhost:8000"


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@database_sync_to_async
def signed_in_cookie() -> str:
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    user = get_user_model().objects.create_user("viewer", password="viewer-pass-123")
    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def stream(path: str, session_key: str) -> WebsocketCommunicator:
    from envduels_site.asgi import application

    headers = [(b"host", HOST.encode()), (b"origin", f"http://{HOST}".encode()),
               (b"cookie", f"sessionid={session_key}".encode())]
    return WebsocketCommunicator(application, path, headers=headers)


async def closed_with(communicator: WebsocketCommunicator) -> int:
    connected, _ = await communicator.connect(timeout=10)
    assert connected, "accepted, so that the close code reaches the client"
    closing = await communicator.receive_output(timeout=10)
    assert closing["type"] == "websocket.close"
    return closing["code"]


@contextlib.contextmanager
def database_away():
    """Every new connection to the default database fails as during a restart: PostgreSQL on a
    port nobody listens on, SQLite in a folder that does not exist."""
    settings_dict = connections.settings["default"]
    saved = dict(settings_dict)
    if "sqlite" in settings_dict["ENGINE"]:
        settings_dict["NAME"] = "/nonexistent-envduels-outage/db.sqlite3"
    else:
        settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        yield
    finally:
        settings_dict.clear()
        settings_dict.update(saved)


@override_settings(ALLOWED_HOSTS=["localhost"])
async def test_a_handshake_while_the_database_is_away_is_told_to_retry():
    study = await database_sync_to_async(played_study)(harden=False)
    session_key = await signed_in_cookie()
    await database_sync_to_async(connections.close_all)()
    with database_away():
        await database_sync_to_async(connections.close_all)()
        code = await closed_with(stream(f"/ws/studies/{study.uuid}/", session_key))
        await database_sync_to_async(connections.close_all)()
    assert code == CLOSE_TRY_AGAIN_LATER
    # Back again, the same viewer's retry is answered.
    retry = stream(f"/ws/studies/{study.uuid}/", session_key)
    connected, _ = await retry.connect(timeout=10)
    assert connected
    assert await retry.receive_nothing(timeout=0.3)
    await retry.disconnect()


async def test_a_handshake_while_redis_is_away_is_told_to_retry():
    study = await database_sync_to_async(played_study)(harden=False)
    session_key = await signed_in_cookie()
    layers = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                          "CONFIG": {"hosts": [f"redis://127.0.0.1:{closed_port()}/0"]}}}
    from channels.layers import channel_layers

    with override_settings(ALLOWED_HOSTS=["localhost"], CHANNEL_LAYERS=layers):
        channel_layers.backends.clear()
        try:
            code = await closed_with(stream(f"/ws/studies/{study.uuid}/", session_key))
        finally:
            channel_layers.backends.clear()
    assert code == CLOSE_TRY_AGAIN_LATER
