"""Partial replies on the episode stream: forwarded while a reply is written, never after."""

from __future__ import annotations

import pytest

from duels.models import Status
from tests.duels.test_consumers import (
    add_step,
    connect,
    make_episode,
    make_user,
    receive_until,
    ring,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def partial(episode, index: int, text: str, thinking: str = "") -> dict:
    return {"type": "reply.partial", "episode": str(episode.uuid), "index": index,
            "text": text, "thinking": thinking}


async def test_partial_text_is_forwarded_until_its_step_is_stored():
    user = await make_user()
    episode = await make_episode(steps=2, status=Status.RUNNING)
    communicator = await connect(episode, user)
    await receive_until(communicator, index=2)

    await ring(episode, partial(episode, 3, "I will go", "north is open"))
    message = await communicator.receive_json_from(timeout=3)
    assert message == {"type": "reply.partial", "episode": str(episode.uuid), "index": 3,
                       "text": "I will go", "thinking": "north is open"}
    await ring(episode, partial(episode, 3, "I will go north.\nACTION: n"))
    message = await communicator.receive_json_from(timeout=3)
    assert message["text"] == "I will go north.\nACTION: n"

    await add_step(episode, 3)
    await ring(episode, {"type": "step.ready", "episode": str(episode.uuid), "index": 3})
    indices, _, _ = await receive_until(communicator, index=3)
    assert indices == [3]
    # A partial that arrives after its step (a slow doorbell) is dropped, not shown again.
    await ring(episode, partial(episode, 3, "stale"))
    assert await communicator.receive_nothing(timeout=0.7)
    await communicator.disconnect()


async def test_a_late_viewer_sees_stored_steps_and_no_partial_of_them():
    user = await make_user()
    episode = await make_episode(steps=3, status=Status.RUNNING)
    communicator = await connect(episode, user)
    indices, _, _ = await receive_until(communicator, index=3)
    assert indices == [0, 1, 2, 3]
    await ring(episode, partial(episode, 2, "old text"))
    await ring(episode, partial(episode, 4, "new text"))
    message = await communicator.receive_json_from(timeout=3)
    assert message["type"] == "reply.partial" and message["index"] == 4
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()
