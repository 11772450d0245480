"""The fan-out of one episode's live steps to its viewers in one server process.

Fan-out: the viewers of one episode in one server process share one group membership (an
EpisodeHub), so a doorbell crosses the channel layer once per process, not once per viewer,
its step is encoded once, and it is handed to each viewer by a plain call. Coalescing: when
no frame went out in the last COALESCE_SECONDS a doorbell's step is sent at once; otherwise
it waits for the end of that window and goes out in one frame with the others that arrived
meanwhile (viewers at the same point of the stream share that frame's text). The hub also
runs the poll: one query per episode per process every POLL_SECONDS without a doorbell, and
only the viewers it finds behind read their news.

Joining: viewers that join together (a page of viewers opening at once) share one catch-up read.
The hub reads the stored steps after a point once for every viewer asking for that point while
the read runs, and encodes each step once; the doorbell steps of the last moments are handed to
each joining viewer too, so a shared read that began before a viewer subscribed misses nothing.
Catch-ups take one query however many join, so the steps of viewers already watching are not
held behind a queue of per-viewer reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from typing import Protocol

from channels.db import database_sync_to_async

from duels.selectors.episodes import (
    STEP_FIELDS,
    EpisodeState,
    episode_state,
    episode_steps_after,
    episodes_progress,
)

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5
COALESCE_SECONDS = 0.025
BATCH_SIZE = 500
# Doorbell steps a hub keeps for viewers that join (a shared read may predate their joining).
RECENT_STEPS = 256


def db_read(function):
    """Run a read-only query in the worker thread pool. By default Channels runs every
    database call of every consumer of a process on one thread, one after another: under a
    hundred viewers new connections waited there past Daphne's 5-second accept limit."""
    return database_sync_to_async(function, thread_sensitive=False)


@db_read
def _load_news(episode_uuid: str, episode_pk: int, since: int) -> tuple[EpisodeState, list]:
    """The status first, then the steps: a status read as ended guarantees every step of the
    episode is already stored (the worker writes its last step before ending the episode)."""
    state = episode_state(episode_uuid=episode_uuid)
    return state, episode_steps_after(episode_pk=episode_pk, since=since, limit=BATCH_SIZE)


@db_read
def _load_progress(episode_pks: list[int]) -> dict[int, tuple[bool, int]]:
    return episodes_progress(episode_pks=episode_pks)


class Viewer(Protocol):
    """What a hub asks of one viewer's stream (duels.consumers.EpisodeConsumer)."""

    episode_pk: int
    last_index: int
    known: int
    ended: bool
    recheck: bool

    def take_step(self, index: int | None, item: str | None) -> None: ...
    def take_partial(self, index: int, frame: str) -> None: ...
    def take_end(self) -> None: ...
    def has_news(self) -> bool: ...
    async def flush(self, frames: dict[tuple[int, int], str]) -> None: ...


class EpisodeHub:
    """The one member of group `episode.<uuid>` for all viewers of that episode on one event
    loop: receives each doorbell once, encodes its step once, and sends each coalesced frame
    to every viewer that is at the same point of the stream."""

    hubs: dict[tuple[asyncio.AbstractEventLoop, str], EpisodeHub] = {}
    pollers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}

    def __init__(self, layer, episode_uuid: str, episode_pk: int) -> None:
        self.layer = layer
        self.episode_uuid = episode_uuid
        self.episode_pk = episode_pk
        self.group = f"episode.{episode_uuid}"
        self.key = (asyncio.get_running_loop(), episode_uuid)
        self.viewers: set[Viewer] = set()
        self.subscribed = asyncio.Event()
        self.next_flush_at = 0.0
        self.last_doorbell = 0.0
        self.flusher: asyncio.Task | None = None
        self.recent: deque[tuple[int, str]] = deque(maxlen=RECENT_STEPS)
        self.reads: dict[int, asyncio.Future] = {}
        self.task = asyncio.create_task(self.run())
        loop = self.key[0]
        if loop not in self.pollers:
            self.pollers[loop] = asyncio.create_task(EpisodeHub.poll(loop))

    @classmethod
    async def join(cls, layer, episode_uuid: str, viewer: Viewer) -> EpisodeHub:
        key = (asyncio.get_running_loop(), episode_uuid)
        hub = cls.hubs.get(key)
        if hub is None:
            hub = cls.hubs[key] = cls(layer, episode_uuid, viewer.episode_pk)
        hub.viewers.add(viewer)
        for index, item in hub.recent:  # what a shared read that began earlier may lack
            viewer.take_step(index, item)
        await hub.subscribed.wait()
        return hub

    def leave(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            if self.hubs.get(self.key) is self:
                del self.hubs[self.key]
            loop = self.key[0]
            if not any(key[0] is loop for key in self.hubs):
                poller = self.pollers.pop(loop, None)
                if poller is not None:
                    poller.cancel()
            for task in (self.task, self.flusher):
                if task is not None:
                    task.cancel()

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
                self.deliver(message, self.viewers)
        finally:
            if channel is not None:
                try:
                    await self.layer.group_discard(self.group, channel)
                except Exception:
                    logger.debug("episode hub %s: group_discard failed", self.group,
                                 exc_info=True)

    def deliver(self, message: dict, viewers) -> None:
        """Hand one doorbell to `viewers` (never waits), then schedule a flush."""
        kind = message.get("type")
        if kind == "reply.partial":
            self.deliver_partial(message, viewers)
            return
        self.last_doorbell = time.monotonic()
        if kind == "step.ready":
            index, data = message.get("index"), message.get("data")
            item = None
            if data and isinstance(index, int):
                item = json.dumps(step_message(self.episode_uuid, {**data, "index": index}))
                self.recent.append((index, item))
            for viewer in viewers:
                viewer.take_step(index, item)
        elif kind == "episode.ended":
            self.last_doorbell = 0.0  # the status row may lag the doorbell; the poll finds it
            for viewer in viewers:
                viewer.take_end()
        else:
            return
        self.schedule()

    def deliver_partial(self, message: dict, viewers) -> None:
        """Hand the text of a reply still being written to the viewers that have not seen
        its step yet (encoded once; each viewer sends only the latest it got)."""
        index = message.get("index")
        if not isinstance(index, int):
            return
        frame = json.dumps({
            "type": "reply.partial", "episode": self.episode_uuid, "index": index,
            "text": str(message.get("text") or ""), "thinking": str(message.get("thinking") or ""),
        })
        for viewer in viewers:
            viewer.take_partial(index, frame)

    async def news(self, *, episode_pk: int, since: int) -> tuple[EpisodeState | None,
                                                                   list[tuple[int, str]], bool]:
        """The status and the stored steps after `since` as (index, encoded message), and
        whether a whole batch came back; read and encoded once for every viewer that asks for
        the same `since` while the read runs."""
        read = self.reads.get(since)
        if read is None:
            read = self.reads[since] = asyncio.ensure_future(self._read_news(episode_pk, since))
            read.add_done_callback(lambda _: self.reads.pop(since, None))
        return await asyncio.shield(read)

    async def _read_news(self, episode_pk: int, since: int):
        state, rows = await _load_news(self.episode_uuid, episode_pk, since)
        items = [(row["index"], json.dumps(step_message(self.episode_uuid, row)))
                 for row in rows]
        return state, items, len(rows) >= BATCH_SIZE

    @classmethod
    async def poll(cls, loop: asyncio.AbstractEventLoop) -> None:
        """Every POLL_SECONDS, one pair of queries for every hub of this event loop that heard
        no doorbell meanwhile (a query per hub was most of a busy server's work)."""
        while True:
            await asyncio.sleep(POLL_SECONDS)
            now = time.monotonic()
            due = [hub for key, hub in list(cls.hubs.items())
                   if key[0] is loop and hub.quiet(now)]
            if not due:
                continue
            try:
                progress = await _load_progress([hub.episode_pk for hub in due])
            except Exception:
                logger.warning("episode hubs: poll failed", exc_info=True)
                continue
            for hub in due:
                if hub.episode_pk in progress:
                    hub.take_progress(*progress[hub.episode_pk])

    def quiet(self, now: float) -> bool:
        """Someone is watching and no doorbell came in the last POLL_SECONDS."""
        return now - self.last_doorbell >= POLL_SECONDS and any(
            not viewer.ended for viewer in self.viewers)

    def take_progress(self, ended: bool, last_index: int) -> None:
        """Wake the viewers behind `last_index`, or all of them when the episode ended."""
        watching = [viewer for viewer in self.viewers if not viewer.ended]
        if not watching or not (ended or last_index > min(v.last_index for v in watching)):
            return
        for viewer in watching:
            if ended:
                viewer.recheck = True
            else:
                viewer.known = max(viewer.known, last_index)
        self.schedule()

    def schedule(self) -> None:
        """Flush now if no frame went out in the last window, else at the window's end."""
        if self.flusher is None:
            self.flusher = asyncio.create_task(self.flush(self.next_flush_at - time.monotonic()))

    async def flush(self, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        frames: dict[tuple[int, int], str] = {}  # viewers at the same point share one frame
        for viewer in list(self.viewers):
            try:
                await viewer.flush(frames)
            except Exception:  # one broken connection must not hold up the others
                logger.warning("episode hub %s: a viewer's frame failed", self.group,
                               exc_info=True)
        self.next_flush_at = time.monotonic() + COALESCE_SECONDS
        self.flusher = None
        if any(viewer.has_news() for viewer in self.viewers):
            self.schedule()  # doorbells that came during this flush, or a viewer busy sending


def step_message(episode_uuid: str, data: dict) -> dict:
    payload = {name: data.get(name) for name in STEP_FIELDS}
    return {"type": "step", "episode": episode_uuid, "index": payload["index"], "data": payload}


def steps_frame(episode_uuid: str, items: list[str]) -> str:
    """One websocket frame from encoded step messages: the message itself, or a `steps`."""
    if len(items) == 1:
        return items[0]
    return (f'{{"type": "steps", "episode": {json.dumps(episode_uuid)}, '
            f'"items": [{", ".join(items)}]}}')


def stream_viewers() -> int:
    """How many live episode viewers are connected to this web process (for /metrics)."""
    return sum(len(hub.viewers) for hub in list(EpisodeHub.hubs.values()))
