"""The replay after play's sandbox and its fresh pass, run beside the play so they cost the
episode little time at its end.

When the episode's first action is played, a fresh sandbox (another process, its clocks moved
by `REPLAY_CLOCK_OFFSET`, its heap laid out anew) is started in a thread of its own, outside
the ready supply and after the burst of the episode's own start, and reset with the episode's
seed and a clock stride: every step of this fresh pass moves its clocks on by
`REPLAY_CLOCK_STRIDE` first, so the time the environment sees between two of its steps is the
stride plus whatever the host took, never the play's pace. Each action played is sent to it
while the solver's model thinks over its next reply. When the episode ends,
`duels.engine.proof.episode_prove` compares the fresh pass's answers with the stored ones and
replays the actions once more in the same sandbox, at the replay's own pace (the reused pass),
in the same thread. Nothing here touches the database.

A fresh pass that broke for the infrastructure's reasons (the sandbox backend gone, a sandbox
killed from outside), or that does not cover the episode (it was resumed elsewhere), is not a
result: the proof then replays afresh.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from duels.bounds import OBSERVATION_CHARS, text_bound
from duels.engine.replay_clock import REPLAY_CLOCK_OFFSET, REPLAY_CLOCK_STRIDE
from sandbox_runner import (
    EnvCodeError,
    Sandbox,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    open_sandbox,
)

T = TypeVar("T")
# Faults the environment's own code causes: they stop the fresh pass at that answer (evidence).
ENVIRONMENT_FAULTS = (EnvCodeError, SandboxTimeout, SandboxMemoryExceeded, SandboxOutputExceeded)


@dataclass
class FreshPass:
    """What the fresh pass beside the play answered: the reset's, then one per action sent."""

    answers: list[dict[str, Any]] = field(default_factory=list)
    stopped: tuple[int, BaseException] | None = None  # (answer number, the environment's fault)
    broken: bool = False  # an infrastructure fault or a bug: replay afresh


class ReplaySandbox:
    """A sandbox for the proof after play, started and fed beside the play."""

    def __init__(self, *, source: str, seed: int, backend: str,
                 adapter: dict | None = None) -> None:
        self.source, self.seed, self.backend = source, seed, backend
        self.adapter = adapter  # the environment's sandbox_adapter (an envduels-v1 class)
        self.busy_seconds = 0.0  # its start and the fresh pass, in its own thread
        self.fresh = FreshPass()
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        self._opened = self._closed = False
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replay-sandbox")

    def send(self, action: str) -> None:
        """Replay one more action in the fresh pass (the first call starts the sandbox)."""
        with self._lock:
            if self._closed:
                return
            if not self._opened:
                self._opened = True
                self._worker.submit(self._timed, self._open)
            self._worker.submit(self._timed, lambda: self._step(action))

    def run(self, work: Callable[[Sandbox | None, FreshPass | None], T]) -> T:
        """Return `work(sandbox, fresh)` once every action sent has been replayed: the started
        sandbox (now `work`'s to close) and its fresh pass, or (None, None) when none was
        started. It runs in the replay's own thread when a sandbox was started there: a
        sandbox lives as long as the thread that started it (the backends end it with that
        thread), so it never changes threads."""
        with self._lock:
            started = self._opened and not self._closed
        if not started:
            return work(None, None)
        return self._worker.submit(self._handed, work).result()

    def close(self) -> None:
        """Stop the sandbox if nobody took it, without waiting, and end the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._worker.submit(self._discard)
        self._worker.shutdown(wait=False)

    def _handed(self, work: Callable[[Sandbox | None, FreshPass | None], T]) -> T:
        sandbox, self._sandbox = self._sandbox, None
        return work(sandbox, self.fresh if sandbox is not None else None)

    def _discard(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.close()

    def _timed(self, work: Callable[[], None]) -> None:
        if self._closed or self.fresh.stopped is not None or self.fresh.broken:
            return
        started = time.monotonic()
        try:
            work()
        except ENVIRONMENT_FAULTS as error:
            self.fresh.stopped = (len(self.fresh.answers), error)
        except Exception:  # a bug or the infrastructure must never stop the play: replay afresh
            self.fresh.broken = True
            self._discard()
        finally:
            self.busy_seconds += time.monotonic() - started

    def _open(self) -> None:
        # Started here, in the replay's own thread: the ready sandboxes are the episodes'.
        self._sandbox = open_sandbox(self.source, backend=self.backend,
                                     clock_offset=REPLAY_CLOCK_OFFSET, ready=False,
                                     adapter=self.adapter)
        observation = self._sandbox.reset(seed=self.seed, clock_stride=REPLAY_CLOCK_STRIDE)
        self.fresh.answers.append({"observation": text_bound(observation,
                                                             limit=OBSERVATION_CHARS)})

    def _step(self, action: str) -> None:
        if self._sandbox is None:
            return
        result = self._sandbox.step(action)
        self.fresh.answers.append({
            "observation": text_bound(result.observation, limit=OBSERVATION_CHARS),
            "reward": result.reward, "done": result.done, "success": result.success})
