"""Sandbox supply: started, never-loaded sandboxes kept ready so an episode never waits for one.

Every episode still gets a fresh sandbox: a ready one is handed out once, loaded with exactly one
environment, and killed when the episode ends; it is never returned. How many are kept ready
follows demand: as many as are in use right now for the same (backend, limits, image), so each
episode that ends finds a replacement for the next one, bounded by `ENVDUELS_SANDBOX_READY`
(default 8). Starts run in parallel on long-lived threads, because a launcher dies with the
thread that spawned it (pdeathsig), which is what keeps sandboxes from outliving the host.
At exit every ready sandbox is killed; after a SIGKILL the launchers die with their parent
(bwrap, unshare) and the docker backend's start-up reaper removes labelled leftovers.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from sandbox_runner.backends.base import Backend, SandboxProcess
from sandbox_runner.limits import SandboxLimits, django_setting, prewarm_enabled

MAX_WARM_KEYS = 4
DEFAULT_READY = 8


def ready_max() -> int:
    """ENVDUELS_SANDBOX_READY: at most this many sandboxes are kept ready (per backend/limits)."""
    raw = django_setting("ENVDUELS_SANDBOX_READY", DEFAULT_READY)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"ENVDUELS_SANDBOX_READY must be a whole number, got {raw!r}") from None
    if not 0 <= value <= 256:
        raise ValueError(f"ENVDUELS_SANDBOX_READY must be from 0 to 256, got {value}")
    return value


@dataclass
class SupplyStats:
    """Takes and hits since start: a hit is a take that found a started sandbox waiting (not
    one still starting)."""

    takes: int = 0
    hits: int = 0
    starts: int = 0

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.takes if self.takes else None


class _Supply:
    """Ready sandboxes of one key, and how many of that key are in use."""

    __slots__ = ("in_use", "ready")

    def __init__(self) -> None:
        self.ready: deque[Future[SandboxProcess]] = deque()
        self.in_use = 0


class WarmPool:
    def __init__(self) -> None:
        self.size = ready_max()
        self.starter = ThreadPoolExecutor(max_workers=max(1, self.size),
                                          thread_name_prefix="sandbox-start")
        self.supplies: OrderedDict[tuple, _Supply] = OrderedDict()
        self.lock = threading.Lock()
        self.shut_down = False
        self.stats = SupplyStats()

    @staticmethod
    def key(backend: Backend, limits: SandboxLimits) -> tuple:
        return (backend.name, limits, getattr(backend, "image", None))

    def take(self, backend: Backend, limits: SandboxLimits) -> tuple[SandboxProcess, bool]:
        """Return (a fresh started sandbox, whether it was ready); top the supply up behind it."""
        key = self.key(backend, limits)
        with self.lock:
            supply = self.supplies.get(key) or self._new_supply(key)
            self.supplies.move_to_end(key)
            # The earliest started first: it is the most likely to be up already.
            future = supply.ready.popleft() if supply.ready else None
            supply.in_use += 1
            self.stats.takes += 1
            # A hit is a sandbox already started; one still starting saves only part of the wait.
            self.stats.hits += future is not None and future.done()
        try:
            process = _started(future)
            pooled = process is not None
            if process is None:
                process = self.starter.submit(backend.start, limits).result()
        except BaseException:
            self._release(key)
            raise
        with self.lock:
            self.stats.starts += not pooled
        self._track(key, process)
        if backend.name != "unsafe-local" and prewarm_enabled():
            self.top_up(key, backend, limits)
        return process, pooled

    def top_up(self, key: tuple, backend: Backend, limits: SandboxLimits) -> int:
        """Start sandboxes until the ready count matches the demand; return how many started."""
        with self.lock:
            supply = self.supplies.get(key)
            if self.shut_down or supply is None:
                return 0
            if self.size == 0:
                return 0
            wanted = min(self.size, max(1, supply.in_use)) - len(supply.ready)
            for _ in range(max(0, wanted)):
                supply.ready.append(self.starter.submit(backend.start, limits))
                self.stats.starts += 1
        return max(0, wanted)

    def ready_count(self) -> int:
        """Sandboxes started (or starting) and waiting for an episode, over every key."""
        with self.lock:
            return sum(len(supply.ready) for supply in self.supplies.values())

    def _new_supply(self, key: tuple) -> _Supply:
        supply = self.supplies[key] = _Supply()
        while len(self.supplies) > MAX_WARM_KEYS:
            _, evicted = self.supplies.popitem(last=False)
            for future in evicted.ready:
                future.add_done_callback(kill_started)
        return supply

    def _track(self, key: tuple, process: SandboxProcess) -> None:
        """Count the sandbox as in use until it is killed (which every episode end does)."""
        kill = process.kill
        released = threading.Event()

        def kill_and_release() -> None:
            try:
                kill()
            finally:
                if not released.is_set():
                    released.set()
                    self._release(key)

        process.kill = kill_and_release

    def _release(self, key: tuple) -> None:
        with self.lock:
            supply = self.supplies.get(key)
            if supply is not None and supply.in_use > 0:
                supply.in_use -= 1

    def clear(self) -> None:
        """Kill every ready sandbox (at exit, and in tests that need a quiet machine)."""
        with self.lock:
            futures = [future for supply in self.supplies.values() for future in supply.ready]
            for supply in self.supplies.values():
                supply.ready.clear()
        for future in futures:
            future.add_done_callback(kill_started)

    def shutdown(self) -> None:
        with self.lock:
            self.shut_down = True
        self.clear()
        self.starter.shutdown(wait=True)
        if self.stats.takes and os.environ.get("ENVDUELS_SANDBOX_SUPPLY_REPORT") == "1":
            # Written straight to stderr: at exit the logging streams may already be closed.
            os.write(2, (f"sandbox supply: {self.stats.takes} taken, {self.stats.hits} found "
                         f"ready, {self.stats.starts} started\n").encode())


def _started(future: Future[SandboxProcess] | None) -> SandboxProcess | None:
    """The sandbox a ready future started, or None when it failed or died while it waited."""
    if future is None:
        return None
    try:
        process = future.result()
    except Exception:
        return None
    if not process.alive():
        process.kill()
        return None
    return process


def kill_started(future: Future[SandboxProcess]) -> None:
    with contextlib.suppress(Exception):
        future.result().kill()


POOL = WarmPool()
atexit.register(POOL.shutdown)
# A forked child (a test's live server, a worker started by fork) inherits the supply's futures
# but not the threads starting them: it would wait on them forever. It starts with an empty
# supply of its own instead; the parent's sandboxes stay the parent's.
os.register_at_fork(after_in_child=POOL.__init__)
