"""An open episode stream ends within seconds of its credentials ending (a revoked token, a
new password, a deactivated account, a signed-out session), and frames a viewer sends are
ignored without an error."""

from __future__ import annotations

import logging
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore

from duels.models import ApiToken, Status
from duels.services.api_tokens import api_token_create
from envduels_site.asgi import application as site_application
from tests.duels.test_consumers import connect, make_episode, make_user, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

CLOSE_WITHIN_SECONDS = 5.0


@database_sync_to_async
def user_with_token(name: str) -> tuple:
    user = get_user_model().objects.create_user(name, password="streamer-pass-123")
    token, raw = api_token_create(user=user, name="stream")
    return user, token, raw


@database_sync_to_async
def signed_in_session(user) -> str:
    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return session.session_key


async def open_stream(episode, *headers: tuple[bytes, bytes]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        site_application, f"/ws/episodes/{episode.uuid}/",
        headers=[(b"host", b"localhost:8000"), *headers])
    connected, _ = await communicator.connect()
    assert connected
    indices, _, _ = await receive_until(communicator, index=2)
    assert indices == [0, 1, 2]
    return communicator


async def seconds_until_closed(communicator: WebsocketCommunicator) -> float:
    """Seconds until the server closes the stream (it must close with 4401)."""
    started = time.monotonic()
    closing = await communicator.receive_output(timeout=CLOSE_WITHIN_SECONDS + 1)
    assert closing == {"type": "websocket.close", "code": 4401}
    return time.monotonic() - started


async def test_a_revoked_tokens_open_stream_is_closed_within_5_s():
    episode = await make_episode(steps=2, status=Status.RUNNING)
    _, token, raw = await user_with_token("revoked")
    communicator = await open_stream(episode, (b"authorization", f"Bearer {raw}".encode()))
    assert await communicator.receive_nothing(timeout=0.5)  # it stays open while the token holds
    await database_sync_to_async(ApiToken.objects.filter(pk=token.pk).delete)()
    assert await seconds_until_closed(communicator) < CLOSE_WITHIN_SECONDS


async def test_a_new_password_closes_a_token_stream():
    episode = await make_episode(steps=2, status=Status.RUNNING)
    user, _, raw = await user_with_token("repassworded")
    communicator = await open_stream(episode, (b"authorization", f"Bearer {raw}".encode()))

    def change_password():
        user.set_password("another-pass-456")
        user.save()

    await database_sync_to_async(change_password)()
    assert await seconds_until_closed(communicator) < CLOSE_WITHIN_SECONDS


async def test_signing_out_and_deactivation_close_session_streams():
    episode = await make_episode(steps=2, status=Status.RUNNING)
    user = await make_user("session-viewer")
    site = (b"origin", b"http://localhost:8000")
    first = await open_stream(
        episode, site, (b"cookie", f"sessionid={await signed_in_session(user)}".encode()))
    second_key = await signed_in_session(user)
    second = await open_stream(episode, site, (b"cookie", f"sessionid={second_key}".encode()))
    await database_sync_to_async(SessionStore(second_key).delete)()  # signed out there
    assert await seconds_until_closed(second) < CLOSE_WITHIN_SECONDS
    assert await first.receive_nothing(timeout=0.2)
    await database_sync_to_async(
        get_user_model().objects.filter(pk=user.pk).update)(is_active=False)
    assert await seconds_until_closed(first) < CLOSE_WITHIN_SECONDS


async def test_unexpected_frames_are_ignored_without_an_error(caplog):
    episode = await make_episode(steps=2, status=Status.RUNNING)
    communicator = await connect(episode, await make_user("chatty"))
    await receive_until(communicator, index=2)
    with caplog.at_level(logging.WARNING):
        await communicator.send_to(text_data="{not json")
        await communicator.send_to(text_data='{"type": "step.ready", "index": "x"}')
        await communicator.send_to(bytes_data=b"\xff\x00binary")
        assert await communicator.receive_nothing(timeout=0.5)  # still open, nothing sent
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    await communicator.disconnect()
