"""Fixtures for sandbox tests: one parameter per backend, and a healthy neighbour sandbox."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import replace

import pytest

from sandbox_runner import SandboxLimits, open_sandbox
from sandbox_runner.backends import ISOLATED_BACKENDS, unavailable_reason
from tests.helpers.parts import need

MIB = 1024 * 1024
# Small limits so every hostile case trips fast on a shared 2-core CI machine.
TEST_LIMITS = SandboxLimits(
    memory_bytes=64 * MIB,
    max_processes=32,
    call_timeout=3.0,
    episode_timeout=30.0,
    max_observation_bytes=64 * 1024,
    max_log_bytes=256 * 1024,
    tmpfs_bytes=4 * MIB,
)
# For tests that expect a call to time out: the call limit is short so they finish quickly (a
# load slowed past it by a busy machine is a timeout too, which those tests expect anyway).
# Every other test uses TEST_LIMITS, whose limit leaves room for four test processes on two cores.
TIMEOUT_LIMITS = replace(TEST_LIMITS, call_timeout=1.0)
# The neighbour steps through a whole module of hostile tests: its own time inside calls adds up.
NEIGHBOUR_LIMITS = SandboxLimits(memory_bytes=64 * MIB, call_timeout=20.0, episode_timeout=3600.0)

ECHO_ENV = '''
class Environment:
    max_steps = 200

    def reset(self, seed):
        return "echo ready %d" % seed

    def step(self, action):
        return {"observation": action.replace("ping", "pong"), "done": False, "success": False}

    def reference_solution(self, seed):
        return ["ping"]
'''


def backend_available(name: str) -> bool:
    reason = unavailable_reason(name)
    need(reason is None, f"sandbox backend {name} is unavailable: {reason}")
    return True


# A claim that holds whatever the backend (the guest's or the host's own logic, such as how a
# forged value is judged) runs on the quickest backend only: `@one_backend` on a test that takes
# `backend`. Claims about isolation, limits and lifetime run on every backend.
QUICKEST = "quickest"
one_backend = pytest.mark.parametrize("backend", [QUICKEST], indirect=True)


# Module scope: a module's tests run backend by backend, so each backend's neighbour (below) is
# started once per module.
@pytest.fixture(scope="module", params=ISOLATED_BACKENDS)
def backend(request) -> str:
    if request.param == QUICKEST:
        return first_working_backend()
    backend_available(request.param)
    return request.param


@pytest.fixture(autouse=True)
def _sandboxes_started_on_demand(settings):
    """Each test starts the sandboxes it opens, and no more.

    The supply keeps a sandbox started ahead for each (backend, limits) in use, which pays off
    over a tournament's many episodes; here consecutive tests switch backend and limits, so
    most of those were started for nothing. test_supply.py tests the supply with it on.
    """
    settings.ENVDUELS_SANDBOX_PREWARM = "0"


def first_working_backend() -> str:
    """The first isolated backend that works, fastest first (skips or fails when none)."""
    for name in ("bwrap", "unshare", "docker"):
        if unavailable_reason(name) is None:
            return name
    need(False, "no sandbox backend works here (install bubblewrap or docker.io)")
    return ""


@pytest.fixture
def any_backend() -> str:
    """One working backend, for behaviour that all backends share."""
    return first_working_backend()


class Neighbour:
    """A well-behaved sandbox stepping in a thread while a hostile one runs next to it."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.sandbox = open_sandbox(ECHO_ENV, limits=NEIGHBOUR_LIMITS, backend=backend)
        assert self.sandbox.reset(seed=1) == "echo ready 1"
        self.errors: list[str] = []
        self.steps = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                result = self.sandbox.step(f"ping {self.steps}")
            except Exception as error:
                self.errors.append(f"{type(error).__name__}: {error}")
                return
            if result.observation != f"pong {self.steps}":
                self.errors.append(f"wrong answer {result.observation!r}")
                return
            self.steps += 1
            time.sleep(0.01)

    def still_answering(self) -> None:
        """Assert that no step went wrong so far and that a step sent from now on is answered."""
        answered = self.steps + 2  # the step under way may have been sent before now
        deadline = time.monotonic() + 30
        while self.steps < answered and not self.errors and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not self.errors, f"the neighbour sandbox was disturbed: {self.errors}"
        assert self.steps >= answered, "the neighbour sandbox stopped answering"

    def stop_and_check(self) -> None:
        deadline = time.monotonic() + 10
        while self.steps == 0 and not self.errors and time.monotonic() < deadline:
            time.sleep(0.01)
        self.stopping.set()
        self.thread.join(timeout=30)
        try:
            assert not self.errors, f"the neighbour sandbox was disturbed: {self.errors}"
            assert self.steps > 0
            assert self.sandbox.step("ping last").observation == "pong last"
        finally:
            self.sandbox.close()


@pytest.fixture(scope="module")
def neighbours(backend):
    """The module's neighbour on `backend`, replaced after a test it failed in."""
    started = [Neighbour(backend)]
    yield started
    started[-1].stop_and_check()


@pytest.fixture
def neighbour(backend, neighbours):
    """A healthy sandbox, started before the test, that must answer all through it and after
    it; afterwards a brand-new sandbox must work too. One per module and backend: it steps
    from the module's first test to its last and is checked after each."""
    if neighbours[-1].errors or not neighbours[-1].thread.is_alive():
        with contextlib.suppress(Exception):  # an earlier test already failed on it
            neighbours[-1].sandbox.close()
        neighbours.append(Neighbour(backend))
    yield neighbours[-1]
    neighbours[-1].still_answering()
    with open_sandbox(ECHO_ENV, limits=TEST_LIMITS, backend=backend) as next_sandbox:
        assert next_sandbox.reset(seed=2) == "echo ready 2"
        assert next_sandbox.step("ping").observation == "pong"
