"""Who may open an episode stream: a session, or an API token for scripts; refusals say why.

The consumer accepts and then closes with 4401 (not signed in) or 4404 (no such episode), so a
real client through Daphne sees the code; closing before accepting would reach it as a bare
HTTP 403 whatever the reason.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from duels.services.api_tokens import api_token_create
from envduels_site.asgi import application as site_application
from tests.duels.test_consumers import application, make_episode, make_user, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def closed_with(communicator: WebsocketCommunicator) -> int:
    connected, _ = await communicator.connect()
    assert connected, "the handshake is accepted so the close code reaches the client"
    closing = await communicator.receive_output(timeout=3)
    assert closing["type"] == "websocket.close"
    return closing["code"]


async def test_an_anonymous_viewer_is_accepted_then_closed_with_4401():
    episode = await make_episode(steps=2)
    communicator = WebsocketCommunicator(application(), f"/ws/episodes/{episode.uuid}/")
    communicator.scope["user"] = AnonymousUser()
    assert await closed_with(communicator) == 4401


async def test_an_unknown_episode_is_accepted_then_closed_with_4404():
    communicator = WebsocketCommunicator(
        application(), "/ws/episodes/00000000-0000-0000-0000-000000000000/")
    communicator.scope["user"] = await make_user()
    assert await closed_with(communicator) == 4404


@database_sync_to_async
def token_for(name: str) -> str:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(name, password="scripter-pass-123")
    _, raw = api_token_create(user=user, name="script")
    return raw


async def test_a_script_streams_with_an_api_token_and_no_origin():
    episode = await make_episode(steps=3, success=True, end_reason="done")
    raw = await token_for("scripter")
    communicator = WebsocketCommunicator(
        site_application, f"/ws/episodes/{episode.uuid}/",
        headers=[(b"host", b"localhost:8000"), (b"authorization", f"Bearer {raw}".encode())])
    connected, _ = await communicator.connect()
    assert connected
    indices, _, final = await receive_until(communicator, status=True)
    assert indices == [0, 1, 2, 3] and final["status"] == "finished"
    await communicator.disconnect()


async def test_a_wrong_token_is_closed_with_4401_even_beside_a_session_cookie():
    episode = await make_episode(steps=1)
    communicator = WebsocketCommunicator(
        site_application, f"/ws/episodes/{episode.uuid}/",
        headers=[(b"host", b"localhost:8000"), (b"authorization", b"Bearer edt_wrong"),
                 (b"cookie", b"sessionid=whatever")])
    assert await closed_with(communicator) == 4401


async def test_a_token_does_not_open_the_stream_to_a_foreign_page():
    """A page elsewhere cannot use a token either: a wrong Origin is refused at the handshake."""
    episode = await make_episode(steps=1)
    raw = await token_for("scripter2")
    communicator = WebsocketCommunicator(
        site_application, f"/ws/episodes/{episode.uuid}/",
        headers=[(b"host", b"localhost:8000"), (b"origin", b"http://evil.example"),
                 (b"authorization", f"Bearer {raw}".encode())])
    connected, _ = await communicator.connect()
    assert not connected
