"""The Redis channel layer, against the real Redis server named by REDIS_URL."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.helpers.parts import need

pytestmark = pytest.mark.redis


def redis_reachable(url: str) -> bool:
    if not url:
        return False
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except Exception:
        return False


async def test_group_message_travels_through_real_redis():
    url = os.environ.get("REDIS_URL", "")
    need(redis_reachable(url), "Redis not reachable: set REDIS_URL")
    from channels_redis.core import RedisChannelLayer

    # A prefix of its own, so this test never touches the keys of a server the suite shares
    # (other test processes, other checkouts' runs).
    prefix = f"envduels-test-layer-{uuid.uuid4().hex[:12]}"
    sender = RedisChannelLayer(hosts=[url], prefix=prefix)
    receiver = RedisChannelLayer(hosts=[url], prefix=prefix)
    channel = await receiver.new_channel()
    await receiver.group_add("episode.test-redis", channel)
    try:
        await sender.group_send("episode.test-redis", {"type": "step.ready", "index": 7})
        message = await receiver.receive(channel)
    finally:
        await receiver.group_discard("episode.test-redis", channel)
        await sender.flush()  # deletes only this test's prefix
        await receiver.close_pools()
    assert message == {"type": "step.ready", "index": 7}



async def test_a_quiet_channel_is_read_without_a_socket_timeout(settings):
    """A receive blocks in Redis for the layer's brpop_timeout; the site's socket timeout must be
    longer, or on a quiet channel the read times out first and an episode hub drops its
    subscription (missing doorbells and partial replies until it subscribes again)."""
    from channels_redis.core import RedisChannelLayer

    need("redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"].lower(),
         "the channel layer is not Redis (REDIS_URL was not set at startup)")
    layer = RedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    connection = layer.connection(0).connection_pool.make_connection()  # not connected yet
    socket_timeout = connection.socket_timeout
    await layer.close_pools()
    assert socket_timeout is None or socket_timeout > layer.brpop_timeout
