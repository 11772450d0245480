"""The episode stream consumer: catch-up, since=N, doorbells, gap fill, polling, end status."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from duels.models import Episode, Status, Step
from duels.routing import websocket_urlpatterns
from tests import factories

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def application():
    from channels.routing import URLRouter

    return URLRouter(websocket_urlpatterns)


async def connect(episode: Episode, user, *, since: int | None = None,
                  timeout: float = 1) -> WebsocketCommunicator:
    query = "" if since is None else f"?since={since}"
    communicator = WebsocketCommunicator(application(), f"/ws/episodes/{episode.uuid}/{query}")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect(timeout=timeout)
    assert connected
    return communicator


async def receive_until(communicator, *, index: int | None = None, status: bool = False,
                        timeout: float = 3) -> tuple[list[int], list[dict], dict | None]:
    """Collect step indices (and payloads) until `index` arrived and/or the status came."""
    indices, payloads, final = [], [], None
    while True:
        message = await communicator.receive_json_from(timeout=timeout)
        items = message["items"] if message["type"] == "steps" else [message]
        for item in items:
            if item["type"] == "step":
                assert item["index"] == item["data"]["index"]
                indices.append(item["index"])
                payloads.append(item["data"])
        if message["type"] == "episode.status":
            final = message
        if (index is None or (indices and indices[-1] >= index)) and (not status or final):
            return indices, payloads, final


@database_sync_to_async
def make_user(name="viewer"):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(name, password="viewer-pass-123")


@database_sync_to_async
def make_episode(*, steps: int, status: str = Status.FINISHED, **fields) -> Episode:
    return factories.episode(steps=steps, status=status, **fields)


@database_sync_to_async
def add_step(episode: Episode, index: int, observation: str = "") -> Step:
    return Step.objects.create(episode=episode, index=index, action=str(index),
                               observation=observation or f"obs {index}")


@database_sync_to_async
def end_episode(episode: Episode, **fields) -> None:
    Episode.objects.filter(pk=episode.pk).update(status=Status.FINISHED, **fields)


async def ring(episode: Episode, message: dict) -> None:
    await get_channel_layer().group_send(f"episode.{episode.uuid}", message)


async def test_catch_up_sends_every_step_in_order_then_the_status():
    user = await make_user()
    episode = await make_episode(steps=1200, success=True, end_reason="done")
    communicator = await connect(episode, user)
    indices, payloads, final = await receive_until(communicator, status=True)
    assert indices == list(range(0, 1201))
    assert payloads[5]["action"] == "5" and payloads[5]["reply"].endswith("ACTION: 5")
    assert set(payloads[0]) == {
        "index", "observation", "reply", "action", "reward", "done", "success",
        "latency_ms", "input_tokens", "output_tokens", "format_error", "thinking",
        "cache_read_tokens", "cache_write_tokens", "sandbox_ms", "cost",
    }
    assert {key: final[key] for key in ("type", "episode", "status", "success", "end_reason",
                                         "error")} == {
        "type": "episode.status", "episode": str(episode.uuid), "status": "finished",
        "success": True, "end_reason": "done", "error": "",
    }
    # The live header counters and the end banner come with the status.
    assert final["end"]["kind"] == "passed" and final["steps"] == episode.steps
    assert {"input_tokens", "output_tokens", "cost"} <= set(final)
    assert await communicator.receive_nothing(timeout=0.7)
    await communicator.disconnect()


async def test_since_skips_steps_the_client_already_has():
    user = await make_user()
    episode = await make_episode(steps=10)
    communicator = await connect(episode, user, since=6)
    indices, _, final = await receive_until(communicator, status=True)
    assert indices == [7, 8, 9, 10] and final["status"] == "finished"
    await communicator.disconnect()


async def test_live_doorbell_is_forwarded_with_its_data(monkeypatch):
    from duels.live import episode_hub

    monkeypatch.setattr(episode_hub, "POLL_SECONDS", 60)  # only the doorbell can bring step 3
    user = await make_user()
    episode = await make_episode(steps=2, status=Status.RUNNING)
    communicator = await connect(episode, user)
    indices, _, _ = await receive_until(communicator, index=2)
    assert indices == [0, 1, 2]
    await add_step(episode, 3, observation="stored text")
    data = {"index": 3, "observation": "doorbell text", "reply": "", "action": "3",
            "reward": None, "done": False, "success": False, "latency_ms": 1,
            "input_tokens": 0, "output_tokens": 0, "format_error": "", "episode": "x"}
    await ring(episode, {"type": "step.ready", "episode": str(episode.uuid), "index": 3,
                         "data": data})
    indices, payloads, _ = await receive_until(communicator, index=3)
    assert indices == [3] and payloads[0]["observation"] == "doorbell text"
    await communicator.disconnect()


async def test_gap_in_doorbells_is_filled_from_the_database():
    user = await make_user()
    episode = await make_episode(steps=1, status=Status.RUNNING)
    communicator = await connect(episode, user)
    await receive_until(communicator, index=1)
    for index in (2, 3, 4):
        await add_step(episode, index)
    # Only the doorbell for step 4 arrives (2 and 3 were lost).
    await ring(episode, {"type": "step.ready", "episode": str(episode.uuid), "index": 4,
                         "data": {"index": 4, "observation": "obs 4", "action": "4"}})
    indices, payloads, _ = await receive_until(communicator, index=4)
    assert indices == [2, 3, 4] and payloads[0]["observation"] == "obs 2"
    # A late duplicate doorbell is ignored.
    await ring(episode, {"type": "step.ready", "episode": str(episode.uuid), "index": 3,
                         "data": {"index": 3}})
    await ring(episode, {"type": "duel.updated", "duel": "whatever"})
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_poll_picks_up_steps_without_any_doorbell_and_ends_with_status():
    user = await make_user()
    episode = await make_episode(steps=1, status=Status.RUNNING)
    communicator = await connect(episode, user)
    await receive_until(communicator, index=1)
    await add_step(episode, 2)
    indices, _, _ = await receive_until(communicator, index=2, timeout=2)
    assert indices == [2]
    await add_step(episode, 3)
    await end_episode(episode, success=False, end_reason="sandbox_error", error="guest crashed")
    indices, _, final = await receive_until(communicator, status=True, timeout=2)
    assert indices == [3]
    assert final["status"] == "finished" and final["end_reason"] == "sandbox_error"
    assert final["error"] == "guest crashed"
    await communicator.disconnect()


async def test_episode_ended_doorbell_sends_last_steps_then_status_once():
    user = await make_user()
    episode = await make_episode(steps=1, status=Status.RUNNING)
    communicator = await connect(episode, user)
    await receive_until(communicator, index=1)
    await add_step(episode, 2)
    await end_episode(episode, success=True, end_reason="done")
    await ring(episode, {"type": "episode.ended", "episode": str(episode.uuid),
                         "status": "finished"})
    indices, _, final = await receive_until(communicator, status=True)
    assert indices == [2] and final["success"] is True
    assert await communicator.receive_nothing(timeout=0.8)  # no second status from the poll
    await communicator.disconnect()


async def test_doorbells_and_polls_together_never_repeat_or_skip():
    user = await make_user()
    episode = await make_episode(steps=0, status=Status.RUNNING)
    await add_step(episode, 0)
    communicator = await connect(episode, user)
    seen = (await receive_until(communicator, index=0))[0]
    for index in range(1, 30):
        await add_step(episode, index)
        if index % 3:  # two thirds of the doorbells arrive, some out of order
            await ring(episode, {"type": "step.ready", "episode": str(episode.uuid),
                                 "index": index, "data": {"index": index, "action": str(index)}})
    await end_episode(episode)
    indices, _, _ = await receive_until(communicator, status=True)
    seen += indices
    assert seen == list(range(0, 30))
    await communicator.disconnect()


def step_doorbell(episode: Episode, index: int) -> dict:
    return {"type": "step.ready", "episode": str(episode.uuid), "index": index,
            "data": {"index": index, "action": str(index), "observation": f"bell {index}"}}


async def test_doorbells_close_together_are_coalesced_into_few_frames_in_order():
    user = await make_user()
    episode = await make_episode(steps=0, status=Status.RUNNING)
    await add_step(episode, 0)
    communicator = await connect(episode, user)
    await receive_until(communicator, index=0)
    await ring(episode, step_doorbell(episode, 1))
    first = await communicator.receive_json_from(timeout=3)
    assert first["type"] == "step" and first["index"] == 1  # an idle viewer gets it at once
    for index in range(2, 41):
        await ring(episode, step_doorbell(episode, index))
    frames, indices = 0, []
    while not indices or indices[-1] < 40:
        message = await communicator.receive_json_from(timeout=3)
        frames += 1
        items = message["items"] if message["type"] == "steps" else [message]
        indices += [item["index"] for item in items]
        assert all(item["data"]["observation"] == f"bell {item['index']}" for item in items)
    assert indices == list(range(2, 41))
    assert frames < len(indices)  # doorbells within one window share a frame
    await communicator.disconnect()


async def test_viewers_of_one_episode_share_one_hub_and_each_get_every_step(monkeypatch):
    from duels.live import episode_hub
    from duels.live.episode_hub import EpisodeHub

    # A poll between storing step 2 and ringing would send the stored text: only the doorbell
    # may bring it here, so "bell 2" shows the one hub handed its data to every viewer.
    monkeypatch.setattr(episode_hub, "POLL_SECONDS", 60)
    user = await make_user()
    episode = await make_episode(steps=1, status=Status.RUNNING)
    viewers = [await connect(episode, user) for _ in range(3)]
    for communicator in viewers:
        await receive_until(communicator, index=1)
    hubs = [hub for (_, uuid), hub in EpisodeHub.hubs.items() if uuid == str(episode.uuid)]
    assert len(hubs) == 1 and len(hubs[0].viewers) == 3
    await add_step(episode, 2)
    await ring(episode, step_doorbell(episode, 2))
    for communicator in viewers:
        indices, payloads, _ = await receive_until(communicator, index=2)
        assert indices == [2] and payloads[0]["observation"] == "bell 2"
    for communicator in viewers:
        await communicator.disconnect()
    assert not [key for key in EpisodeHub.hubs if key[1] == str(episode.uuid)]


async def test_idle_viewers_share_one_poll_and_only_read_when_there_is_news(monkeypatch):
    from duels.live import episode_hub

    calls = {"news": 0, "progress": 0}

    def counting(name, function):
        async def wrapper(*args):
            calls[name] += 1
            return await function(*args)
        return wrapper

    monkeypatch.setattr(episode_hub, "_load_news", counting("news", episode_hub._load_news))
    monkeypatch.setattr(episode_hub, "_load_progress",
                        counting("progress", episode_hub._load_progress))
    user = await make_user()
    episode = await make_episode(steps=1, status=Status.RUNNING)
    viewers = [await connect(episode, user) for _ in range(5)]
    for communicator in viewers:
        await receive_until(communicator, index=1)
    caught_up = calls["news"]
    assert 1 <= caught_up <= 5  # the catch-ups (viewers joining together share one)
    await asyncio.sleep(1.3)  # two poll rounds, nothing new
    assert calls["news"] == caught_up
    assert 1 <= calls["progress"] <= 3  # one read per round for all five viewers
    await add_step(episode, 2)  # no doorbell: the shared poll finds it
    for communicator in viewers:
        indices, _, _ = await receive_until(communicator, index=2, timeout=2)
        assert indices == [2]
    for communicator in viewers:
        await communicator.disconnect()


async def test_viewers_joining_together_share_one_catch_up_and_miss_no_doorbell(monkeypatch):
    from duels import consumers
    from duels.live import episode_hub

    calls = {"news": 0, "state": 0}

    def counting(name, function):
        async def wrapper(*args):
            calls[name] += 1
            return await function(*args)
        return wrapper

    monkeypatch.setattr(episode_hub, "POLL_SECONDS", 60)  # only the doorbell brings step 31
    monkeypatch.setattr(episode_hub, "_load_news", counting("news", episode_hub._load_news))
    monkeypatch.setattr(consumers, "_load_state", counting("state", consumers._load_state))
    user = await make_user()
    episode = await make_episode(steps=30, status=Status.RUNNING)
    joining = [asyncio.ensure_future(connect(episode, user, timeout=10)) for _ in range(20)]
    await asyncio.sleep(0)  # the joins are under way when the step is stored and rung
    await add_step(episode, 31, observation="bell 31")
    await ring(episode, step_doorbell(episode, 31))
    viewers = await asyncio.gather(*joining)
    for communicator in viewers:
        indices, _, _ = await receive_until(communicator, index=31)
        assert indices == list(range(32))  # every step once, in order, the rung one included
    assert calls["news"] < 10 and calls["state"] < 10  # not one read per viewer
    for communicator in viewers:
        await communicator.disconnect()


async def test_viewers_of_several_episodes_share_one_poll_per_round(monkeypatch):
    from duels.live import episode_hub

    rounds = []

    async def counting(episode_pks):
        rounds.append(sorted(episode_pks))
        return await original(episode_pks)

    original = episode_hub._load_progress
    monkeypatch.setattr(episode_hub, "_load_progress", counting)
    user = await make_user()
    episodes = [await make_episode(steps=1, status=Status.RUNNING) for _ in range(3)]
    viewers = [await connect(episode, user) for episode in episodes]
    for communicator in viewers:
        await receive_until(communicator, index=1)
    await asyncio.sleep(1.3)  # two poll rounds, nothing new
    assert 1 <= len(rounds) <= 3  # one read per round for the three episodes, not three
    assert sorted(e.pk for e in episodes) in rounds
    await add_step(episodes[2], 2)  # no doorbell: the shared poll finds it
    indices, _, _ = await receive_until(viewers[2], index=2, timeout=2)
    assert indices == [2]
    for communicator in viewers:
        await communicator.disconnect()
