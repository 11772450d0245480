"""Time limits count the environment's own work: its calls, never the time between them."""

from __future__ import annotations

import threading
import time

import pytest

from sandbox_runner import SandboxLimits, SandboxTimeout, open_sandbox
from sandbox_runner.session import Sandbox
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


class JumpingClock:
    """The real monotonic clock plus jumps: `jump(45)` stands for a model thinking 45 s."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.offset

    def jump(self, seconds: float) -> None:
        self.offset += seconds


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
