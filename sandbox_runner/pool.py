"""Warm pool: one started, never-loaded sandbox kept ready per (backend, limits, image).

Every episode still gets a fresh sandbox: a pooled one is handed out once and a replacement
starts in the background. Starts run on long-lived threads because a launcher dies with the
thread that spawned it (pdeathsig), which is what keeps sandboxes from outliving the host.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from sandbox_runner.backends.base import Backend, SandboxProcess
from sandbox_runner.limits import SandboxLimits, prewarm_enabled

MAX_WARM_KEYS = 4


class WarmPool:
    def __init__(self) -> None:
        self.starter = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sandbox-start")
        self.ready: OrderedDict[tuple, Future[SandboxProcess]] = OrderedDict()
        self.lock = threading.Lock()
        self.shut_down = False

    @staticmethod
    def key(backend: Backend, limits: SandboxLimits) -> tuple:
        return (backend.name, limits, getattr(backend, "image", None))

    def take(self, backend: Backend, limits: SandboxLimits) -> tuple[SandboxProcess, bool]:
        """Return (a fresh started sandbox, whether it came from the pool); refill behind it."""
        key = self.key(backend, limits)
        with self.lock:
            future = self.ready.pop(key, None)
        process = None
        if future is not None:
            try:
                process = future.result()
            except Exception:
                process = None
            if process is not None and not process.alive():
                process.kill()
                process = None
        pooled = process is not None
        if process is None:
            process = self.starter.submit(backend.start, limits).result()
        if backend.name != "unsafe-local" and prewarm_enabled():
            self.refill(key, backend, limits)
        return process, pooled

    def refill(self, key: tuple, backend: Backend, limits: SandboxLimits) -> None:
        with self.lock:
            if self.shut_down or key in self.ready:
                return
            self.ready[key] = self.starter.submit(backend.start, limits)
            evicted = []
            while len(self.ready) > MAX_WARM_KEYS:
                evicted.append(self.ready.popitem(last=False)[1])
        for future in evicted:
            future.add_done_callback(kill_started)

    def clear(self) -> None:
        """Kill every warm sandbox (at exit, and in tests that need a quiet machine)."""
        with self.lock:
            futures = list(self.ready.values())
            self.ready.clear()
        for future in futures:
            future.add_done_callback(kill_started)

    def shutdown(self) -> None:
        with self.lock:
            self.shut_down = True
        self.clear()
        self.starter.shutdown(wait=True)


def kill_started(future: Future[SandboxProcess]) -> None:
    with contextlib.suppress(Exception):
        future.result().kill()


POOL = WarmPool()
atexit.register(POOL.shutdown)
