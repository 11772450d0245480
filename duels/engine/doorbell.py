"""The step doorbell: channel-layer messages sent after the database already holds the news.

The database is the truth; a lost doorbell only delays a live view until its next poll, so a
channel layer that is down never fails (nor slows) the step that rang it.

Rings go to the episode's group (`episode.<uuid>`), which the episode viewers' hub joins
(duels/live/episode_hub.py). Duel and tournament pages poll the database instead, so a ring to their
groups would cost a channel-layer round trip (two Redis commands) for nobody. An episode's end
also rings the groups its owner names (duels/engine/owners.py): a study page's `study.<uuid>`,
once per field play, so the page refreshes its progress when a play ends.

Rings go through one long-lived sender per process: a daemon thread with its own event loop,
so the channel layer keeps one connection instead of opening one per ring (which
`async_to_sync` does from a plain worker thread: 10-30 ms a ring). `ring` only appends to a
bounded queue and returns; the thread sends in ring order, one message per group. When the
queue is full (the layer is down or slow) new rings are dropped and counted: consumers catch
up from the database.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from channels.layers import get_channel_layer

from duels.engine.owners import episode_owner
from duels.models import Episode, Step

logger = logging.getLogger(__name__)

QUEUE_CAPACITY = 2000  # rings waiting to be sent; ~20 s of a busy worker (100 steps/s)
SEND_TIMEOUT = 2.0  # seconds one group_send may take before it is given up
LOG_EVERY = 30.0  # seconds between two warnings about undelivered doorbells


class DoorbellSender:
    """Fire-and-forget sends from any thread through one event loop and one channel layer."""

    def __init__(
        self,
        *,
        layer: Callable[[], Any] = get_channel_layer,
        capacity: int = QUEUE_CAPACITY,
        send_timeout: float = SEND_TIMEOUT,
    ) -> None:
        self._layer = layer
        self._capacity = capacity
        self._send_timeout = send_timeout
        self._warned_at = float("-inf")
        self.sent = 0
        self.dropped = 0
        self.failed = 0
        self.reset()

    def reset(self) -> None:
        """Forget the queue and the thread (in a forked child: neither survives a fork)."""
        self._condition = threading.Condition()
        self._queue: collections.deque[tuple[list[str], dict[str, Any]]] = collections.deque()
        self._pending = 0  # queued plus being sent
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()  # the thread has made its channel layer

    def ring(self, groups: list[str], message: dict[str, Any]) -> None:
        """Queue `message` for every group; never blocks, never raises."""
        try:
            with self._condition:
                self._ensure_thread()
                if self._pending >= self._capacity:
                    self.dropped += 1
                    self._warn("doorbell queue full; dropped %s", message.get("type"))
                    return
                self._pending += 1
                self._queue.append((groups, message))
                self._condition.notify()
        except Exception:  # the layer is only a doorbell; never fail the work that rang it
            logger.warning("doorbell %s not queued", message.get("type"), exc_info=True)

    def warm(self, *, wait: float = 0.0) -> bool:
        """Start the sender thread, which makes the channel layer at once, ahead of the first
        ring: making a Redis layer imports its client (some 80 ms), which would otherwise delay
        the first steps a live viewer sees. Waits up to `wait` seconds for the layer; True once
        it is made."""
        try:
            with self._condition:
                self._ensure_thread()
                ready = self._ready
        except Exception:
            logger.warning("doorbell not warmed", exc_info=True)
            return False
        return ready.wait(wait) if wait > 0 else ready.is_set()

    def flush(self, *, timeout: float = 5.0) -> bool:
        """Wait until every queued ring was sent (or given up); False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: self._pending == 0, timeout)

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self._run, name="doorbell", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self._layer()  # made once, before the first ring needs it (get_channel_layer caches)
        except Exception:
            self._warn("channel layer not available", exc_info=True)
        self._ready.set()
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._queue))
                batch = list(self._queue)
                self._queue.clear()
            try:
                loop.run_until_complete(self._send(_superseded_dropped(batch)))
            except Exception:
                self.failed += len(batch)
                self._warn("doorbell sender failed", exc_info=True)
            with self._condition:
                self._pending -= len(batch)
                self._condition.notify_all()

    async def _send(self, batch: list[tuple[list[str], dict[str, Any]]]) -> None:
        layer = self._layer()
        if layer is None:
            return
        for groups, message in batch:
            for group in groups:
                try:
                    await asyncio.wait_for(layer.group_send(group, message), self._send_timeout)
                    self.sent += 1
                except Exception:
                    self.failed += 1
                    self._warn("doorbell %s to %s not delivered", message.get("type"), group,
                               exc_info=True)

    def _warn(self, text: str, *args: Any, exc_info: bool = False) -> None:
        now = time.monotonic()
        if now - self._warned_at >= LOG_EVERY:
            self._warned_at = now
            logger.warning(text + " (sent %d, dropped %d, failed %d so far)", *args,
                           self.sent, self.dropped, self.failed, exc_info=exc_info)


def _superseded_dropped(
    batch: list[tuple[list[str], dict[str, Any]]],
) -> list[tuple[list[str], dict[str, Any]]]:
    """The batch without the partial replies a later ring of the same batch replaces: a
    `reply.partial` carries the whole text so far, so only the last of a step's partials
    matters, and none once that step's `step.ready` is in the batch too. Everything else is
    kept, in order."""
    replaced: set[tuple[Any, Any]] = set()
    kept = []
    for groups, message in reversed(batch):
        kind = message.get("type")
        if kind in ("reply.partial", "step.ready"):
            key = (message.get("episode"), message.get("index"))
            if kind == "reply.partial" and key in replaced:
                continue
            replaced.add(key)
        kept.append((groups, message))
    kept.reverse()
    return kept


_sender = DoorbellSender()
atexit.register(lambda: _sender.flush(timeout=1.0))
os.register_at_fork(after_in_child=_sender.reset)


def doorbell_warm(*, wait: float = 0.0) -> bool:
    """Have this process's doorbell ready before the first step rings it (a driver warms it
    as it starts, long before its first episode steps); True once it is ready."""
    return _sender.warm(wait=wait)


def doorbell_flush(*, timeout: float = 5.0) -> bool:
    """Wait until this process's queued doorbells went out (benchmarks, tests, shutdown)."""
    return _sender.flush(timeout=timeout)


def step_data(*, episode: Episode, step: Step) -> dict[str, Any]:
    """Return a step's fields as in the exchange format."""
    return {
        "episode": str(episode.uuid),
        "index": step.index,
        "observation": step.observation,
        "reply": step.reply,
        "action": step.action,
        "reward": step.reward,
        "done": step.done,
        "success": step.success,
        "latency_ms": step.latency_ms,
        "input_tokens": step.input_tokens,
        "output_tokens": step.output_tokens,
        "format_error": step.format_error,
        "thinking": step.thinking,
        "cache_read_tokens": step.cache_read_tokens,
        "cache_write_tokens": step.cache_write_tokens,
        "sandbox_ms": step.sandbox_ms,
        "cost": step.cost,
    }


def _group(episode: Episode) -> list[str]:
    return [f"episode.{episode.uuid}"]


def doorbell_step_ready(*, episode: Episode, step: Step) -> None:
    """Ring `step.ready` for a step whose transaction has committed."""
    message = {
        "type": "step.ready",
        "episode": str(episode.uuid),
        "index": step.index,
        "data": step_data(episode=episode, step=step),
    }
    _sender.ring(_group(episode), message)


def doorbell_reply_partial(*, episode_uuid: str, index: int, text: str, thinking: str) -> None:
    """Ring the text of step `index`'s reply written so far (not stored; only live viewers of
    the episode hear it, and the committed step replaces it)."""
    _sender.ring([f"episode.{episode_uuid}"], {
        "type": "reply.partial", "episode": episode_uuid, "index": index,
        "text": text, "thinking": thinking,
    })


def doorbell_episode_ended(*, episode: Episode) -> None:
    """Ring `episode.ended` to the episode's group and to its owner's (a study page's)."""
    message = {"type": "episode.ended", "episode": str(episode.uuid), "status": episode.status}
    run = episode_owner(episode)
    _sender.ring(_group(episode) + (run.groups(episode=episode) if run else []), message)
