"""Websocket consumer streaming one episode's steps: catch up from the database, then tail.

Protocol (DESIGN.md "Live streaming and replay"): connect to `/ws/episodes/<uuid>/?since=N`;
the server sends every stored step with index > N (all when `since` is absent) in batches
`{"type": "steps", "episode", "items": [step messages]}`, then new steps as they come, each
as `{"type": "step", "episode", "index", "data"}` or, when several arrive close together, as
one `steps` batch, and `{"type": "episode.status", ...}` once the episode has ended. The
database is the truth: a doorbell (`step.ready`) is forwarded without a query when it carries
the next index, any gap is filled from the database, and a 0.5 s poll covers workers whose
channel layer is not shared with this server.

Coalescing: a doorbell is forwarded at once when the viewer got no frame in the last
COALESCE_SECONDS; otherwise it waits for the end of that window and goes out with the others
that arrived meanwhile, so a fast episode costs each viewer at most one frame per window.
"""

from __future__ import annotations

import asyncio
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


class EpisodeConsumer(AsyncJsonWebsocketConsumer):
    """Streams the steps of one episode to one signed-in viewer, each exactly once, in order."""

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
        self.last_doorbell = 0.0
        self.lock = asyncio.Lock()
        self.poller: asyncio.Task | None = None
        self.pending: list[dict] = []  # doorbell steps up to last_index, not sent yet
        self.next_frame_at = 0.0
        self.flusher: asyncio.Task | None = None
        self.group = f"episode.{self.episode_uuid}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_news()
        if not self.ended:
            self.poller = asyncio.create_task(self.poll())

    async def disconnect(self, code: int) -> None:
        for task in (getattr(self, "poller", None), getattr(self, "flusher", None)):
            if task is not None:
                task.cancel()
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

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

    async def send_pending(self) -> None:
        """Send the doorbell steps held back by the coalescing window (caller holds the lock)."""
        if not self.pending:
            return
        items, self.pending = self.pending, []
        await self.send_steps(items)
        self.next_frame_at = time.monotonic() + COALESCE_SECONDS

    async def send_pending_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        async with self.lock:
            self.flusher = None
            await self.send_pending()

    async def send_news(self) -> None:
        """Send every stored step after the last one sent, then the status if it has ended."""
        async with self.lock:
            if self.ended:
                return
            await self.send_pending()  # they precede anything the database has after them
            while True:
                state, rows = await _load_news(self.episode_uuid, self.episode_pk, self.last_index)
                if rows:
                    await self.send_steps([self.step_message(row) for row in rows])
                    self.last_index = rows[-1]["index"]
                if len(rows) < BATCH_SIZE:
                    break
            if state is not None and state.is_done:
                self.ended = True
                await self.send_json(state.status_message())

    async def poll(self) -> None:
        """Look at the database every POLL_SECONDS unless a doorbell rang meanwhile."""
        while not self.ended:
            await asyncio.sleep(POLL_SECONDS)
            if time.monotonic() - self.last_doorbell >= POLL_SECONDS:
                await self.send_news()

    async def step_ready(self, event: dict) -> None:
        self.last_doorbell = time.monotonic()
        index = event.get("index")
        data = event.get("data")
        async with self.lock:
            if self.ended or index is None or index <= self.last_index:
                return
            if data and index == self.last_index + 1:
                self.pending.append(self.step_message({**data, "index": index}))
                self.last_index = index
                wait = self.next_frame_at - time.monotonic()
                if wait <= 0:
                    await self.send_pending()
                elif self.flusher is None:
                    self.flusher = asyncio.create_task(self.send_pending_later(wait))
                return
        # A gap (or a doorbell without data): the database has every step up to `index`.
        await self.send_news()

    async def episode_ended(self, event: dict) -> None:
        await self.send_news()
        if not self.ended:
            # The status row may lag the doorbell by a moment; the poll will find it.
            self.last_doorbell = 0.0

    async def duel_updated(self, event: dict) -> None:
        """Not relevant to one episode's stream."""

    async def tournament_updated(self, event: dict) -> None:
        """Not relevant to one episode's stream."""
