"""The sandbox supply: ready sandboxes follow demand, each serves one environment, none outlives
the worker process that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandbox_runner import open_sandbox
from sandbox_runner.pool import POOL, WarmPool
from tests.sandbox_runner.conftest import TEST_LIMITS

ROOT = Path(__file__).resolve().parents[2]

ENV_TEMPLATE = '''
class Environment:
    max_steps = 5

    def reset(self, seed):
        return "{name} %d" % seed

    def step(self, action):
        return {{"observation": "{name} " + action, "done": False, "success": False}}
'''


@pytest.fixture(autouse=True)
def _sandboxes_started_on_demand(settings):
    """Ready sandboxes on, as in production: the supply is what this module tests."""
    settings.ENVDUELS_SANDBOX_PREWARM = "1"


def identity(sandbox) -> object:
    """What names the started sandbox: its container id or its launcher's pid."""
    process = sandbox.process
    container = getattr(process, "container", None)
    return container.id if container is not None else process.popen.pid


def started_ready(count: int) -> bool:
    """At least `count` sandboxes wait, and every one of them has finished starting."""
    ready = [future for supply in POOL.supplies.values() for future in supply.ready]
    return len(ready) >= count and all(future.done() for future in ready)


def test_every_environment_gets_its_own_sandbox_and_ready_ones_follow_demand(any_backend):
    """The supply hands out whatever `Backend.start` returned and never looks inside it, so one
    backend shows it; test_ready_sandboxes_end_with_the_worker covers each backend's lifetime."""
    POOL.clear()
    environments = [ENV_TEMPLATE.format(name=f"env{index}") for index in range(12)]

    def play(source: str) -> tuple[object, str]:
        with open_sandbox(source, limits=TEST_LIMITS, backend=any_backend) as sandbox:
            first = sandbox.reset(seed=0)
            time.sleep(0.3)  # hold it, so several are in use at once
            return identity(sandbox), first

    takes_before, hits_before = POOL.stats.takes, POOL.stats.hits
    with ThreadPoolExecutor(max_workers=4) as threads:
        first_wave = list(threads.map(play, environments[:4]))
        # Four were in use at once: the supply now keeps up to four ready.
        deadline = time.monotonic() + 30
        while not started_ready(4) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started_ready(4)
        second_wave = list(threads.map(play, environments[4:]))
    results = first_wave + second_wave
    # Each environment answered as itself, from a sandbox no other environment ever used.
    assert [first for _, first in results] == [f"env{index} 0" for index in range(12)]
    assert len({ident for ident, _ in results}) == len(results)
    assert POOL.stats.takes - takes_before == 12
    # The four left ready by the first wave were found started (later ones may still be starting).
    assert POOL.stats.hits - hits_before >= 4, "the second wave found ready sandboxes"
    POOL.clear()


def test_a_sandbox_is_handed_out_once(any_backend):
    from sandbox_runner.backends import get_backend

    pool = WarmPool()
    try:
        backend = get_backend(any_backend)
        handed = [pool.take(backend, TEST_LIMITS)[0]]
        # Let the sandbox started behind the first one finish starting, so the next take finds
        # it ready (a take right after another finds its replacements still starting).
        ready = pool.supplies[pool.key(backend, TEST_LIMITS)].ready
        deadline = time.monotonic() + 30
        while not all(future.done() for future in ready) and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(5):
            process, _pooled = pool.take(backend, TEST_LIMITS)
            handed.append(process)
        assert len({id(process) for process in handed}) == 6
        assert pool.stats.hits >= 1
        for process in handed:
            process.kill()
    finally:
        pool.shutdown()


def test_demand_is_released_when_a_sandbox_ends(any_backend):
    from sandbox_runner.backends import get_backend

    pool = WarmPool()
    try:
        backend = get_backend(any_backend)
        key = pool.key(backend, TEST_LIMITS)
        processes = [pool.take(backend, TEST_LIMITS)[0] for _ in range(3)]
        assert pool.supplies[key].in_use == 3
        for process in processes:
            process.kill()
            process.kill()  # killing twice releases once
        assert pool.supplies[key].in_use == 0
    finally:
        pool.shutdown()


WORKER_SCRIPT = """
import os, signal, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
django.setup()
from sandbox_runner import open_sandbox
from sandbox_runner.pool import POOL
from tests.sandbox_runner.conftest import TEST_LIMITS
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as the task worker does
sandboxes = [open_sandbox(ECHO, limits=TEST_LIMITS, backend=sys.argv[1]) for _ in range(3)]
while POOL.ready_count() < 3 or not all(f.done() for s in POOL.supplies.values() for f in s.ready):
    time.sleep(0.05)
ready = [f.result() for s in POOL.supplies.values() for f in s.ready]
for process in ready:
    container = getattr(process, "container", None)
    print(container.id if container is not None else process.popen.pid, flush=True)
print("READY", flush=True)
time.sleep(120)
"""


def _gone(backend: str, ident: str) -> bool:
    if backend == "docker":
        import docker

        client = docker.from_env()
        try:
            client.containers.get(ident)
        except docker.errors.NotFound:
            return True
        return False
    try:
        os.kill(int(ident), 0)
    except ProcessLookupError:
        return True
    # A zombie not yet reaped by its (exited) parent is gone too.
    status = Path(f"/proc/{ident}/status")
    return not status.exists() or "zombie" in status.read_text()


@pytest.mark.slow
def test_ready_sandboxes_end_with_the_worker(backend):
    from tests.sandbox_runner.conftest import ECHO_ENV

    script = WORKER_SCRIPT.replace("ECHO", repr(ECHO_ENV))
    worker = subprocess.Popen([sys.executable, "-c", script, backend], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    idents = []
    try:
        for line in worker.stdout:
            if line.strip() == "READY":
                break
            idents.append(line.strip())
        assert len(idents) >= 3, "the worker kept ready sandboxes"
        assert not any(_gone(backend, ident) for ident in idents)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    deadline = time.monotonic() + 30
    while not all(_gone(backend, ident) for ident in idents) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert all(_gone(backend, ident) for ident in idents), "a ready sandbox outlived its worker"
