"""Time limits count the environment's own work: its calls, never the time between them."""

from __future__ import annotations

import threading

import pytest

from sandbox_runner import SandboxLimits, SandboxTimeout, open_sandbox
from sandbox_runner.session import Sandbox
from tests.helpers.clocks import JumpingClock
from tests.sandbox_runner.conftest import ECHO_ENV, MIB

pytestmark = pytest.mark.timeout(90)

SLOW_STEP_ENV = '''
import time

class Environment:
    max_steps = 50

    def reset(self, seed):
        return "ready"

    def step(self, action):
        time.sleep(0.3)
        return {"observation": "slow", "done": False, "success": False}
'''


def test_the_environment_total_spans_its_calls(any_backend):
    limits = SandboxLimits(memory_bytes=64 * MIB, call_timeout=2.0, episode_timeout=1.0)
    with open_sandbox(SLOW_STEP_ENV, limits=limits, backend=any_backend) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises(SandboxTimeout, match="total time limit of 1 s"):
            for _ in range(10):
                sandbox.step("go")
        assert 0.9 <= sandbox.environment_seconds < 2.0


def test_a_sandbox_waits_for_its_next_call_past_every_limit(backend):
    """Idle longer than the call limit and the total limit together: still usable, on every
    backend (no launcher, container or pool has an idle timeout)."""
    limits = SandboxLimits(memory_bytes=64 * MIB, call_timeout=1.0, episode_timeout=1.5)
    with open_sandbox(ECHO_ENV, limits=limits, backend=backend) as sandbox:
        assert sandbox.reset(seed=1) == "echo ready 1"
        threading.Event().wait(1.6)  # the model's time: longer than both limits
        assert sandbox.step("ping").observation == "pong"
        threading.Event().wait(1.1)
        assert sandbox.step("ping ping").observation == "pong pong"
        assert sandbox.environment_seconds < 1.5


def test_model_time_between_calls_never_counts(any_backend, monkeypatch):
    """45 s of model time before each step, 20 steps: 900 s of wall time on the session's clock,
    far past the 120 s the environment may spend, and every step still answers."""
    clock = JumpingClock()
    monkeypatch.setattr(Sandbox, "clock", staticmethod(clock))
    with open_sandbox(ECHO_ENV, limits=SandboxLimits(memory_bytes=64 * MIB),
                      backend=any_backend) as sandbox:
        sandbox.reset(seed=0)
        for _ in range(20):
            clock.jump(45.0)
            assert sandbox.step("ping").observation == "pong"
        assert sandbox.environment_seconds < 10


def test_the_environment_total_is_measured_on_the_session_clock(any_backend, monkeypatch):
    """The same clock, jumping 61 s at each reading, makes every call look 61 s long: the third
    call finds the 120 s total spent and the sandbox is killed (the clock is what counts)."""

    class Racing(JumpingClock):
        def __call__(self) -> float:
            self.jump(61.0)
            return super().__call__()

    monkeypatch.setattr(Sandbox, "clock", staticmethod(Racing()))
    with open_sandbox(ECHO_ENV, limits=SandboxLimits(memory_bytes=64 * MIB, call_timeout=5.0),
                      backend=any_backend) as sandbox:
        sandbox.reset(seed=0)  # the load and the reset: 122 s of the environment's time
        with pytest.raises(SandboxTimeout, match="total time limit of 120 s"):
            sandbox.step("ping")
