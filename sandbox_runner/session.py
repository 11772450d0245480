"""One open sandbox: the environment loaded in a guest, driven call by call under limits.

Time limits count the environment's own work only: each call has `call_timeout`, and the time
spent inside all calls together (the module load included) has `episode_timeout`. The time
between calls belongs to whoever drives the sandbox (a model thinking over its reply), so a
sandbox stays usable however long that takes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox_runner.backends.base import SandboxProcess
from sandbox_runner.errors import (
    EnvCodeError,
    EnvCrashed,
    SandboxCrashed,
    SandboxError,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
)
from sandbox_runner.limits import SandboxLimits
from sandbox_runner.protocol import ENCODE_STRING, Channel, StreamClosed, encode_body
from sandbox_runner.replies import (
    ProtocolViolation,
    reply_load_values,
    reply_reference_actions,
    reply_text,
)


@dataclass(frozen=True)
class StepResult:
    observation: str
    done: bool
    success: bool
    reward: float = 0.0

    @classmethod
    def checked(cls, observation: str, done: bool, success: bool, reward: float) -> StepResult:
        """Build from values already type-checked, skipping the frozen per-field setattr
        (the step hot path; a frozen dataclass keeps its fields in the instance dict)."""
        result = object.__new__(cls)
        result.__dict__.update(observation=observation, done=done, success=success,
                               reward=reward)
        return result


class Sandbox:
    """A started guest. Use as a context manager; any limit violation kills it for good."""

    # The clock that measures the environment's time; tests may swap in one that also jumps
    # forward between calls, to stand for a slow model without waiting for it.
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, process: SandboxProcess, limits: SandboxLimits) -> None:
        self.process = process
        self.limits = limits
        self.backend_name = process.backend_name
        self.channel = Channel(process.transport, max_reply_bytes=limits.max_reply_bytes,
                               max_log_bytes=limits.max_log_bytes,
                               max_observation_bytes=limits.max_observation_bytes)
        self.environment_seconds = 0.0  # spent inside calls so far
        self.max_steps: int | None = None
        self.has_reference = False
        self.failure: SandboxError | None = None
        self.closed = False

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def log(self) -> str:
        """What the environment printed so far (stdout and stderr, at most max_log_bytes)."""
        if not self.closed:
            try:
                self.channel.settle_log()
            except SandboxError as error:
                self.failure = error
                self.kill()
        return self.channel.log_text

    def load(self, code: str, *, clock_offset: int = 0, adapter: dict | None = None) -> None:
        """Load the module; with `clock_offset` (seconds) every clock it reads is moved by that
        much (the replay after play: see the guest); `adapter` names another interface the guest
        adapts (an envduels-v1 class: {"format": "envduels-v1", "class_name", "max_turns"})."""
        fields: dict = {"clock_offset": int(clock_offset)} if clock_offset else {}
        if adapter is not None:
            fields["adapter"] = adapter
        reply = self.call("load", code=code, **fields)
        self.max_steps, self.has_reference = self.checked(reply_load_values, reply)

    def reset(self, seed: int = 0, *, clock_stride: int = 0) -> str:
        """Start an episode. With `clock_stride` (seconds; only in a sandbox loaded with a
        `clock_offset`) every step of it first moves the clocks on by that much more."""
        fields = {"clock_stride": int(clock_stride)} if clock_stride else {}
        reply = self.call("reset", seed=int(seed), **fields)
        return self.checked(reply_text, reply.get("observation"), "observation",
                            self.limits.max_observation_bytes)

    def step(self, action: str) -> StepResult:
        body = b',"op":"step","action":' + ENCODE_STRING(str(action)).encode() + b"}\n"
        observation, done, success, reward = self.request(
            "step", body, self.channel.exchange_step)
        return StepResult.checked(observation, done, success, reward)

    def reference_solution(self, seed: int = 0) -> list[str] | None:
        if not self.has_reference:
            return None
        return self.checked(reply_reference_actions, self.call("reference", seed=int(seed)))

    def checked(self, check: Callable, *args: Any) -> Any:
        """Return `check(*args)`; a reply it rejects kills the sandbox (the guest was subverted)."""
        try:
            return check(*args)
        except (ProtocolViolation, SandboxOutputExceeded) as error:
            self.fail(error)

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.request(op, encode_body({"op": op, **fields}))

    def request(self, op: str, body: bytes, exchange: Callable | None = None) -> Any:
        """Send one request (`body` as made by encode_body) under the call and episode limits;
        return what `exchange` (by default the channel's) makes of the reply."""
        if self.failure is not None:
            raise type(self.failure)(f"the sandbox was already stopped: {self.failure}")
        if self.closed:
            raise SandboxCrashed("the sandbox is closed")
        left = self.limits.episode_timeout - self.environment_seconds
        if left <= 0:
            # The total is spent: send nothing. (Sent with a deadline already past, a reply
            # fast enough to be waiting at the first poll would still be taken.)
            self.fail(self.over_total(op))
        allowed = min(self.limits.call_timeout, left)
        started = self.clock()
        # The channel's deadline is on the real clock, whatever clock measures the total.
        deadline = time.monotonic() + allowed
        try:
            return (exchange or self.channel.exchange)(body, deadline, allowed)
        except SandboxTimeout:
            if allowed < self.limits.call_timeout:
                self.fail(self.over_total(op))
            self.fail(SandboxTimeout(
                f"{op} exceeded the call time limit of {self.limits.call_timeout:g} s; "
                "sandbox killed"))
        except StreamClosed:
            self.channel.drain_log(0.2)
            self.fail(self.ended(op))
        except (ProtocolViolation, SandboxOutputExceeded, SandboxMemoryExceeded) as error:
            self.fail(error)
        except EnvCodeError:
            raise  # the environment raised; the guest is intact and may be called again
        finally:
            self.environment_seconds += self.clock() - started
        raise AssertionError("unreachable")

    def ended(self, op: str) -> SandboxError:
        """Why the sandbox ended during `op`, as its launcher or engine tells (see
        describe_exit). Before the module is loaded, a launcher that failed to set the sandbox
        up looks the same as an environment ending itself at import, so an end during the load
        stays a crash of the sandbox (validation runs it again, then refuses the environment)."""
        error = self.process.exit_error(self.channel.log_text)
        if op == "load" and isinstance(error, EnvCrashed):
            return SandboxCrashed(str(error))
        return error

    def over_total(self, op: str) -> SandboxTimeout:
        return SandboxTimeout(
            f"{op} went over the environment's total time limit of "
            f"{self.limits.episode_timeout:g} s (time spent inside its calls); sandbox killed")

    def fail(self, error: SandboxError) -> None:
        """Kill the sandbox and raise `error` (kept, so later calls fail the same way)."""
        self.failure = error
        self.kill()
        raise error

    def kill(self) -> None:
        if not self.closed:
            self.closed = True
            self.process.kill()

    def close(self) -> None:
        """Stop the guest and remove the sandbox. Safe to call more than once."""
        if self.closed:
            return
        try:
            self.process.transport.send(b'{"op": "close"}\n')
            self.channel.pump(0)
        except (OSError, SandboxError):
            pass
        self.kill()
