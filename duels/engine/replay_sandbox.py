"""The replay after play's sandbox, started while the episode is played so its start costs the
episode no time at its end.

When the episode's first action is played, a fresh sandbox (another process, its clocks moved
by `REPLAY_CLOCK_OFFSET`, its heap laid out anew) is started and the environment loaded in a
thread of its own, outside the ready supply and after the burst of the episode's own start
(its sandbox, the observation, the first model call), when a whole round's episodes start at
once. Nothing is played in it then: when the episode ends, `duels.engine.proof.episode_prove`
replays the stored actions in it, in the same thread, at the replay's own pace, once fresh and
once more in the same process. Nothing here touches the database.

A sandbox that could not be started here (whatever the reason) is not a result: the proof then
starts one itself and meets the same fault there, where it is told apart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from duels.engine.replay_clock import REPLAY_CLOCK_OFFSET
from sandbox_runner import Sandbox, open_sandbox

T = TypeVar("T")


class ReplaySandbox:
    """A sandbox for the proof after play, started beside the play."""

    def __init__(self, *, source: str, backend: str, adapter: dict | None = None) -> None:
        self.source, self.backend = source, backend
        self.adapter = adapter  # the environment's sandbox_adapter (an envduels-v1 class)
        self.busy_seconds = 0.0  # its start, in its own thread
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._future: Future | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replay-sandbox")

    def prepare(self) -> None:
        """Start the sandbox in its own thread, once (called as the episode's actions are
        played; the first call starts it)."""
        with self._lock:
            if self._future is None and not self._closed:
                self._future = self._worker.submit(self._open)

    def run(self, work: Callable[[Sandbox | None], T]) -> T:
        """Return `work(sandbox)`, `sandbox` being the started one (now `work`'s to close) or
        None when none was started or it could not be. It runs in the replay's own thread
        when a sandbox was started there: a sandbox lives as long as the thread that started
        it (the backends end it with that thread), so it never changes threads."""
        with self._lock:
            started = self._future is not None and not self._closed
        if not started:
            return work(None)
        return self._worker.submit(self._handed, work).result()

    def close(self) -> None:
        """Stop the sandbox if nobody took it, without waiting, and end the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._worker.submit(self._discard)
        self._worker.shutdown(wait=False)

    def _handed(self, work: Callable[[Sandbox | None], T]) -> T:
        sandbox, self._sandbox = self._sandbox, None
        return work(sandbox)

    def _discard(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.close()

    def _open(self) -> None:
        started = time.monotonic()
        try:
            # Started here, in the replay's own thread: the ready sandboxes are the episodes'.
            self._sandbox = open_sandbox(self.source, backend=self.backend,
                                         clock_offset=REPLAY_CLOCK_OFFSET, ready=False,
                                         adapter=self.adapter)
        except Exception:  # the proof starts one itself and tells the fault apart there
            self._sandbox = None
        finally:
            self.busy_seconds += time.monotonic() - started
