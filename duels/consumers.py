"""Websocket consumer streaming one episode's steps: catch up from the database, then tail.

Protocol (DESIGN.md "Live streaming and replay"): connect to `/ws/episodes/<uuid>/?since=N`;
the server sends every stored step with index > N (all when `since` is absent) in batches
`{"type": "steps", "episode", "items": [step messages]}`, then new steps as they come, each
as `{"type": "step", "episode", "index", "data"}` or, when several arrive close together, as
one `steps` batch, and `{"type": "episode.status", ...}` once the episode has ended. The
database is the truth: a doorbell (`step.ready`) is forwarded without a query when it carries
the next index, any gap is filled from the database, and a 0.5 s poll covers workers whose
channel layer is not shared with this server.

Fan-out: the viewers of one episode in one server process share one group membership (an
EpisodeHub), so a doorbell crosses the channel layer once per process, not once per viewer,
and is handed to each viewer by a plain call. Coalescing: a viewer who got no frame in the
last COALESCE_SECONDS gets a doorbell's step at once; otherwise it waits for the end of that
window and goes out in one frame with the others that arrived meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from duels.selectors.episodes import (
    STEP_FIELDS,
    EpisodeState,
    episode_state,
    episode_steps_after,
)

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5
COALESCE_SECONDS = 0.025
BATCH_SIZE = 500
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404


@database_sync_to_async
def _load_state(episode_uuid: str) -> EpisodeState | None:
    return episode_state(episode_uuid=episode_uuid)


@database_sync_to_async
def _load_news(episode_uuid: str, episode_pk: int, since: int) -> tuple[EpisodeState, list]:
    """The status first, then the steps: a status read as ended guarantees every step of the
    episode is already stored (the worker writes its last step before ending the episode)."""
    state = episode_state(episode_uuid=episode_uuid)
    return state, episode_steps_after(episode_pk=episode_pk, since=since, limit=BATCH_SIZE)


def _since(query_string: bytes) -> int:
    values = parse_qs(query_string.decode("latin-1")).get("since", [])
    try:
        return max(int(values[-1]), -1) if values else -1
    except ValueError:
        return -1


class EpisodeHub:
    """The one member of group `episode.<uuid>` for all viewers of that episode on one event
    loop: receives each doorbell once and hands it to every viewer."""

    hubs: dict[tuple[asyncio.AbstractEventLoop, str], EpisodeHub] = {}

    def __init__(self, layer, episode_uuid: str) -> None:
        self.layer = layer
        self.group = f"episode.{episode_uuid}"
        self.key = (asyncio.get_running_loop(), episode_uuid)
        self.viewers: set[EpisodeConsumer] = set()
        self.subscribed = asyncio.Event()
        self.task = asyncio.create_task(self.run())

    @classmethod
    async def join(cls, layer, episode_uuid: str, viewer: EpisodeConsumer) -> EpisodeHub:
        key = (asyncio.get_running_loop(), episode_uuid)
        hub = cls.hubs.get(key)
        if hub is None:
            hub = cls.hubs[key] = cls(layer, episode_uuid)
        hub.viewers.add(viewer)
        await hub.subscribed.wait()
        return hub

    def leave(self, viewer: EpisodeConsumer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            if self.hubs.get(self.key) is self:
                del self.hubs[self.key]
            self.task.cancel()

    async def run(self) -> None:
        channel = None
        try:
            while True:
                try:
                    if channel is None:
                        channel = await self.layer.new_channel()
                        await self.layer.group_add(self.group, channel)
                        self.subscribed.set()
                    message = await self.layer.receive(channel)
                except asyncio.CancelledError:
                    raise
                except Exception:  # viewers poll meanwhile; subscribe again in a moment
                    logger.warning("episode hub %s lost its channel layer", self.group,
                                   exc_info=True)
                    self.subscribed.set()
                    channel = None
                    await asyncio.sleep(1.0)
                    continue
                for viewer in list(self.viewers):
                    viewer.doorbell(message)
        finally:
            if channel is not None:
                try:
                    await self.layer.group_discard(self.group, channel)
                except Exception:
                    logger.debug("episode hub %s: group_discard failed", self.group,
                                 exc_info=True)


class EpisodeConsumer(AsyncJsonWebsocketConsumer):
    """Streams the steps of one episode to one signed-in viewer, each exactly once, in order.

    `last_index` is the last step queued for this viewer; `pending` holds the doorbell steps
    not yet sent (contiguous, ending at `last_index`); everything before them was sent.
    """

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.episode_uuid = str(self.scope["url_route"]["kwargs"]["episode_uuid"])
        state = await _load_state(self.episode_uuid)
        if state is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.episode_pk = state.pk
        self.last_index = _since(self.scope.get("query_string", b""))
        self.ended = False
        self.stale = False  # the database holds steps (or an end) the doorbells did not carry
        self.pending: list[dict] = []
        self.last_doorbell = 0.0
        self.next_frame_at = 0.0
        self.lock = asyncio.Lock()
        self.flusher: asyncio.Task | None = None
        self.poller: asyncio.Task | None = None
        self.hub = await EpisodeHub.join(self.channel_layer, self.episode_uuid, self)
        await self.accept()
        async with self.lock:
            await self.send_news()
        if not self.ended:
            self.poller = asyncio.create_task(self.poll())

    async def disconnect(self, code: int) -> None:
        for task in (getattr(self, "poller", None), getattr(self, "flusher", None)):
            if task is not None:
                task.cancel()
        if getattr(self, "hub", None) is not None:
            self.hub.leave(self)

    async def receive_json(self, content, **kwargs) -> None:
        """Viewers only listen; anything they send is ignored."""

    def step_message(self, data: dict) -> dict:
        payload = {name: data.get(name) for name in STEP_FIELDS}
        return {
            "type": "step",
            "episode": self.episode_uuid,
            "index": payload["index"],
            "data": payload,
        }

    async def send_steps(self, items: list[dict]) -> None:
        if len(items) == 1:
            await self.send_json(items[0])
        elif items:
            await self.send_json({"type": "steps", "episode": self.episode_uuid, "items": items})

    async def send_news(self) -> None:
        """Send the pending steps, every stored step after them, then the status if the
        episode has ended (the caller holds the lock)."""
        self.stale = False
        while not self.ended:
            state, rows = await _load_news(self.episode_uuid, self.episode_pk, self.last_index)
            # Doorbells may have queued more steps while the query ran: keep only newer rows.
            fresh = [self.step_message(row) for row in rows if row["index"] > self.last_index]
            items, self.pending = self.pending + fresh, []
            if fresh:
                self.last_index = fresh[-1]["index"]
            await self.send_steps(items)
            if len(rows) < BATCH_SIZE:
                if state is not None and state.is_done:
                    self.ended = True
                    await self.send_json(state.status_message())
                return

    async def flush(self, delay: float) -> None:
        """After `delay`, send what the doorbells brought (from the database if stale)."""
        if delay > 0:
            await asyncio.sleep(delay)
        async with self.lock:
            self.flusher = None
            if self.ended:
                return
            if self.stale:
                await self.send_news()
            else:
                items, self.pending = self.pending, []
                await self.send_steps(items)
            self.next_frame_at = time.monotonic() + COALESCE_SECONDS

    def doorbell(self, event: dict) -> None:
        """Take one doorbell (from the hub or this consumer's own channel); never waits."""
        self.last_doorbell = time.monotonic()
        if self.ended:
            return
        if event.get("type") == "step.ready":
            index, data = event.get("index"), event.get("data")
            if index is None or index <= self.last_index:
                return
            if data and index == self.last_index + 1 and not self.stale:
                self.pending.append(self.step_message({**data, "index": index}))
                self.last_index = index
            else:  # a gap, or a doorbell without data: the database has every step to `index`
                self.stale = True
        elif event.get("type") == "episode.ended":
            self.stale = True
            # The status row may lag the doorbell by a moment; the poll will find it.
            self.last_doorbell = 0.0
        else:
            return
        if self.flusher is None:
            self.flusher = asyncio.create_task(
                self.flush(self.next_frame_at - time.monotonic())
            )

    async def poll(self) -> None:
        """Look at the database every POLL_SECONDS unless a doorbell rang meanwhile."""
        while not self.ended:
            await asyncio.sleep(POLL_SECONDS)
            if time.monotonic() - self.last_doorbell >= POLL_SECONDS:
                async with self.lock:
                    await self.send_news()

    async def step_ready(self, event: dict) -> None:
        self.doorbell(event)

    async def episode_ended(self, event: dict) -> None:
        self.doorbell(event)

    async def duel_updated(self, event: dict) -> None:
        """Not relevant to one episode's stream."""

    async def tournament_updated(self, event: dict) -> None:
        """Not relevant to one episode's stream."""
