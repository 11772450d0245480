"""The replay after play, run beside the play so it costs the episode no time at its end.

When the episode's first action is played, a second fresh sandbox (another process, its clocks
moved by `REPLAY_CLOCK_OFFSET`, its heap laid out anew) is opened in a thread of its own and
reset with the episode's seed; that action and each one after it is sent to it too, while the
solver's model thinks over its next reply. Opened then rather than at the episode's start, the
replay's sandbox is not started in the burst of an episode's own start (its sandbox, the
observation, the first model call), when a whole round's episodes start at once. When the
episode ends the replay's answers are ready, and `duels.engine.proof.episode_prove` compares
them with the stored ones. Nothing here touches the database.

A replay that broke for the infrastructure's reasons (the sandbox backend gone, a sandbox killed
from outside) is not a result: the proof then replays the stored actions afresh.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from duels.bounds import OBSERVATION_CHARS, text_bound
from duels.engine.replay_clock import REPLAY_CLOCK_OFFSET
from sandbox_runner import (
    EnvCodeError,
    SandboxError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    open_sandbox,
)

# Faults the environment's own code causes: they stop the replay at that answer (evidence).
ENVIRONMENT_FAULTS = (EnvCodeError, SandboxTimeout, SandboxMemoryExceeded, SandboxOutputExceeded)


class ReplayAlongside:
    """A second sandbox replaying the episode's actions as they are played."""

    def __init__(self, *, source: str, seed: int, backend: str,
                 adapter: dict | None = None) -> None:
        self.source, self.seed, self.backend = source, seed, backend
        self.adapter = adapter  # the environment's sandbox_adapter (an envduels-v1 class)
        self.answers: list[dict[str, Any]] = []  # the reset's, then one per action sent
        self.stopped: tuple[int, BaseException] | None = None  # (answer number, the fault)
        self.broken: BaseException | None = None  # an infrastructure fault: replay afresh
        self.busy_seconds = 0.0
        self._sandbox = None
        self._closing = threading.Event()
        self._ended = False  # finished() or close() was called: nothing more is queued
        self._opened = False  # _open has been queued
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replay-alongside")

    def _queue_open(self) -> None:
        if not self._opened:
            self._opened = True
            self._worker.submit(self._open)

    def send(self, action: str) -> None:
        """Replay one more action (after the live sandbox answered it)."""
        self._queue_open()
        self._worker.submit(self._step, action)

    def finished(self) -> ReplayAlongside:
        """Wait for every action sent so far to be replayed, then stop the sandbox."""
        if not self._ended:
            self._queue_open()  # an episode that ended before its first action: its reset
            self._ended = True
            self._worker.submit(self._close)
            self._worker.shutdown(wait=True)
        return self

    def close(self) -> None:
        """Stop without waiting for what is still queued (the episode stopped early)."""
        if not self._ended:
            self._ended = True
            self._closing.set()
            self._worker.submit(self._close)
            self._worker.shutdown(wait=False)

    def _usable(self) -> bool:
        return not self._closing.is_set() and self.stopped is None and self.broken is None

    def _timed(self, work) -> None:
        started = time.monotonic()
        try:
            work()
        except ENVIRONMENT_FAULTS as error:
            self.stopped = (len(self.answers), error)
        except SandboxError as error:
            self.broken = error
        except Exception as error:  # a bug here must never stop the play: replay afresh later
            self.broken = error
        finally:
            self.busy_seconds += time.monotonic() - started

    def _open(self) -> None:
        def work() -> None:
            # Started here, in the replay's own thread: the ready sandboxes are the episodes'.
            self._sandbox = open_sandbox(self.source, backend=self.backend,
                                         clock_offset=REPLAY_CLOCK_OFFSET, ready=False,
                                         adapter=self.adapter)
            observation = self._sandbox.reset(seed=self.seed)
            self.answers.append({"observation": text_bound(observation,
                                                           limit=OBSERVATION_CHARS)})
        if self._usable():
            self._timed(work)

    def _step(self, action: str) -> None:
        def work() -> None:
            result = self._sandbox.step(action)
            self.answers.append({
                "observation": text_bound(result.observation, limit=OBSERVATION_CHARS),
                "reward": result.reward, "done": result.done, "success": result.success})
        if self._usable() and self._sandbox is not None:
            self._timed(work)

    def _close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
