"""The doorbell sender: rings go out in order through one loop; a dead layer costs nothing."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest
from django.test import override_settings

from duels.engine import doorbell
from duels.engine.doorbell import DoorbellSender, doorbell_flush, doorbell_step_ready
from duels.engine.episodes import episode_record_step
from duels.models import Status
from tests.envduels_site.test_redis_layer import redis_reachable
from tests.helpers.parts import need


class RecordingLayer:
    """A channel layer that keeps what it is sent, and on which thread and loop."""

    def __init__(self, *, fail_first: int = 0, hang: bool = False) -> None:
        self.sent: list[tuple[str, dict]] = []
        self.loops: set[int] = set()
        self.threads: set[str] = set()
        self.fail_first = fail_first
        self.hang = hang

    async def group_send(self, group: str, message: dict) -> None:
        self.loops.add(id(asyncio.get_running_loop()))
        self.threads.add(threading.current_thread().name)
        if self.hang:
            await asyncio.sleep(3600)
        if self.fail_first:
            self.fail_first -= 1
            raise ConnectionError("layer down")
        self.sent.append((group, message))


def test_rings_are_sent_in_order_to_every_group_from_one_loop():
    layer = RecordingLayer()
    sender = DoorbellSender(layer=lambda: layer)
    for index in range(50):
        sender.ring(["episode.e", "duel.d"], {"type": "step.ready", "index": index})
    assert sender.flush(timeout=5)
    assert layer.sent[:4] == [
        ("episode.e", {"type": "step.ready", "index": 0}),
        ("duel.d", {"type": "step.ready", "index": 0}),
        ("episode.e", {"type": "step.ready", "index": 1}),
        ("duel.d", {"type": "step.ready", "index": 1}),
    ]
    assert [m["index"] for g, m in layer.sent if g == "episode.e"] == list(range(50))
    assert sender.sent == 100 and sender.dropped == 0 and sender.failed == 0
    # One long-lived loop on one thread, not a fresh loop (and connection) per ring.
    assert len(layer.loops) == 1 and layer.threads == {"doorbell"}


def test_warming_makes_the_layer_before_any_ring():
    made = []
    layer = RecordingLayer()

    def make_layer():
        made.append(threading.current_thread().name)
        time.sleep(0.05)  # as importing a Redis client takes a while
        return layer

    sender = DoorbellSender(layer=make_layer)
    assert sender.warm(wait=5)
    assert made == ["doorbell"]
    assert sender.warm() is True  # warm already: nothing more is made
    sender.ring(["episode.e"], {"type": "step.ready", "index": 1})
    assert sender.flush(timeout=5)
    assert layer.sent == [("episode.e", {"type": "step.ready", "index": 1})]


def test_a_batch_sends_only_the_partial_replies_no_later_ring_replaces():
    """A partial carries the whole reply so far: of one step's partials queued together only
    the last goes out, and none once the step itself is queued behind them; other steps'
    partials and every other message are kept, in order."""
    batch = [
        (["episode.e"], {"type": "reply.partial", "episode": "e", "index": 3, "text": "a"}),
        (["episode.f"], {"type": "reply.partial", "episode": "f", "index": 3, "text": "x"}),
        (["episode.e"], {"type": "reply.partial", "episode": "e", "index": 3, "text": "ab"}),
        (["episode.e"], {"type": "step.ready", "episode": "e", "index": 3}),
        (["episode.e"], {"type": "reply.partial", "episode": "e", "index": 4, "text": "c"}),
        (["episode.f"], {"type": "reply.partial", "episode": "f", "index": 3, "text": "xy"}),
        (["episode.e"], {"type": "episode.ended", "episode": "e"}),
    ]
    kept = doorbell._superseded_dropped(batch)
    assert kept == [batch[3], batch[4], batch[5], batch[6]]
    layer = RecordingLayer()
    sender = DoorbellSender(layer=lambda: layer)
    with sender._condition:  # queue the whole batch before the thread takes any of it
        for groups, message in batch:
            sender.ring(groups, message)
    assert sender.flush(timeout=5)
    assert [message for _, message in layer.sent] == [message for _, message in kept]


def test_a_hanging_layer_never_blocks_the_ringing_thread():
    layer = RecordingLayer(hang=True)
    sender = DoorbellSender(layer=lambda: layer, capacity=5, send_timeout=0.05)
    started = time.monotonic()
    for index in range(500):
        sender.ring(["episode.e"], {"type": "step.ready", "index": index})
    assert time.monotonic() - started < 0.5
    assert sender.dropped >= 495 - 5  # the queue holds 5; the thread may have taken some
    assert sender.flush(timeout=5)  # each queued send gives up after send_timeout
    assert layer.sent == [] and sender.failed == 500 - sender.dropped


def test_a_failing_layer_counts_the_failure_and_keeps_sending():
    layer = RecordingLayer(fail_first=1)
    sender = DoorbellSender(layer=lambda: layer)
    sender.ring(["episode.e"], {"type": "step.ready", "index": 1})
    sender.ring(["episode.e"], {"type": "step.ready", "index": 2})
    assert sender.flush(timeout=5)
    assert sender.failed == 1 and layer.sent == [("episode.e", {"type": "step.ready", "index": 2})]


def test_no_layer_configured_is_a_quiet_no_op():
    sender = DoorbellSender(layer=lambda: None)
    sender.ring(["episode.e"], {"type": "step.ready", "index": 1})
    assert sender.flush(timeout=5) and sender.sent == 0 and sender.failed == 0


def test_a_forked_child_gets_a_working_sender_of_its_own():
    layer = RecordingLayer()
    sender = DoorbellSender(layer=lambda: layer)
    sender.ring(["episode.e"], {"type": "step.ready", "index": 1})
    assert sender.flush(timeout=5)
    doorbell._sender.ring([], {"type": "nothing"})  # the process-wide sender's thread runs
    assert doorbell._sender.flush(timeout=5)
    pid = os.fork()
    if pid == 0:  # the child: the parent's threads do not exist here
        forgotten = doorbell._sender._thread is None  # reset by the at-fork hook
        sender.reset()
        sender.ring(["episode.e"], {"type": "step.ready", "index": 2})
        os._exit(0 if forgotten and sender.flush(timeout=5) and len(layer.sent) == 2 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(layer.sent) == 1  # the child's send happened in the child only


UNREACHABLE = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                           "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]}}}


@pytest.mark.django_db(transaction=True)
def test_step_writes_with_an_unreachable_layer_are_neither_slowed_nor_failed(make):
    episode = make.episode(status=Status.RUNNING, success=None, lease_owner="w1")
    failed_before = doorbell._sender.failed
    with override_settings(CHANNEL_LAYERS=UNREACHABLE):
        took = []
        for index in range(20):
            step = episode_record_step(episode=episode, owner="w1", index=index,
                                       observation=f"obs {index}")
            started = time.monotonic()
            doorbell_step_ready(episode=episode, step=step)
            took.append(time.monotonic() - started)
        # Handing the ring to the sender's thread, not waiting on the layer: the typical ring
        # takes well under a millisecond; one may wait on a busy machine's scheduler (54 ms was
        # seen at load 12), never on the layer's failures (which the flush below waits out).
        assert sorted(took)[len(took) // 2] < 0.02 and max(took) < 0.5
        assert doorbell_flush(timeout=30)
    assert episode.trajectory.count() == 20
    assert doorbell._sender.failed > failed_before


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
async def test_rings_arrive_through_the_configured_redis_layer(make):
    url = os.environ.get("REDIS_URL", "")
    need(redis_reachable(url), "Redis not reachable: set REDIS_URL")
    from asgiref.sync import sync_to_async
    from channels.layers import get_channel_layer

    episode = await sync_to_async(make.episode)(steps=2, status=Status.RUNNING, success=None)
    step = await sync_to_async(episode.trajectory.get)(index=2)
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = f"episode.{episode.uuid}"
    await layer.group_add(group, channel)
    try:
        doorbell_step_ready(episode=episode, step=step)
        message = await asyncio.wait_for(layer.receive(channel), timeout=5)
    finally:
        await layer.group_discard(group, channel)
    assert message["type"] == "step.ready" and message["index"] == 2
    assert message["data"]["observation"] == step.observation
    assert message["data"]["index"] == 2 and message["episode"] == str(episode.uuid)
