"""A Redis restart in the middle of a live stream: the viewer still gets every step exactly once."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from channels.layers import channel_layers, get_channel_layer

from duels.models import Status
from tests.duels.test_consumers import (
    add_step,
    connect,
    end_episode,
    make_episode,
    make_user,
    receive_until,
)
from tests.helpers.private_services import private_redis

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.redis]


@pytest.fixture
def restartable_redis(settings):
    with private_redis() as server:
        settings.CHANNEL_LAYERS = {"default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [server.url], "capacity": 5000, "expiry": 30},
        }}
        channel_layers.backends.clear()
        try:
            yield server
        finally:
            channel_layers.backends.clear()


async def _step_with_doorbell(episode, index: int) -> None:
    """Store a step, then ring as a worker does; a doorbell lost while Redis is down is fine."""
    await add_step(episode, index)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(get_channel_layer().group_send(
            f"episode.{episode.uuid}",
            {"type": "step.ready", "episode": str(episode.uuid), "index": index,
             "data": {"index": index, "action": str(index)}}), timeout=2)


async def test_a_redis_restart_mid_stream_loses_and_repeats_no_step(restartable_redis):
    user = await make_user()
    episode = await make_episode(steps=0, status=Status.RUNNING)
    await add_step(episode, 0)
    communicator = await connect(episode, user)
    seen = (await receive_until(communicator, index=0))[0]
    for index in range(1, 5):
        await _step_with_doorbell(episode, index)
    seen += (await receive_until(communicator, index=4, timeout=10))[0]

    # Redis goes away (losing every group membership) while the worker keeps storing steps.
    await asyncio.to_thread(restartable_redis.stop)
    for index in range(5, 8):
        await _step_with_doorbell(episode, index)
    await asyncio.sleep(1.0)
    await asyncio.to_thread(restartable_redis.start)
    for index in range(8, 13):
        await _step_with_doorbell(episode, index)
        await asyncio.sleep(0.2)
    await end_episode(episode)

    indices, _, final = await receive_until(communicator, status=True, timeout=15)
    seen += indices
    assert seen == list(range(13))
    assert final["status"] == Status.FINISHED
    await communicator.disconnect()
