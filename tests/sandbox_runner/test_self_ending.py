"""An environment that ends or crashes its own process is the environment's failure
(EnvCrashed, the exit shown); a sandbox killed from outside stays SandboxCrashed. Nothing the
guest prints decides which: the host reads how the sandbox's first process ended."""

from __future__ import annotations

import os
import signal
import time

import pytest

from sandbox_runner import EnvCodeError, EnvCrashed, SandboxCrashed, SandboxTimeout, open_sandbox
from tests.helpers.self_kills import SELF_KILLS, self_killing_source
from tests.sandbox_runner import hostile
from tests.sandbox_runner.conftest import TEST_LIMITS, one_backend

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("kill", sorted(SELF_KILLS))
def test_an_environment_ending_its_own_process_is_its_crash(backend, kill):
    statement, shown = SELF_KILLS[kill]
    with open_sandbox(self_killing_source(statement), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        assert sandbox.step("one").observation == "turn 1"
        with pytest.raises(EnvCrashed, match=shown) as crashed:
            sandbox.step("two")
        assert isinstance(crashed.value, EnvCodeError)
        with pytest.raises(EnvCrashed):  # the sandbox is gone for good
            sandbox.step("three")


def _kill_from_outside(sandbox, signum: int) -> None:
    """Signal the sandbox as the host sees it: the launcher's process group, or the container."""
    process = sandbox.process
    if hasattr(process, "popen"):
        os.killpg(process.popen.pid, signum)
    else:
        process.container.kill(signal=signum)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_sandbox_killed_from_outside_is_not_the_environments_crash(backend, signum):
    with open_sandbox(self_killing_source("pass"), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        assert sandbox.step("one").observation == "turn 1"
        _kill_from_outside(sandbox, signum)
        deadline = time.monotonic() + 20
        with pytest.raises(SandboxCrashed, match="killed from outside") as crashed:
            while time.monotonic() < deadline:  # until the kill has landed
                sandbox.step("again")
                time.sleep(0.05)
        assert not isinstance(crashed.value, EnvCodeError)


@one_backend
@pytest.mark.parametrize("sender", ["os.kill(1, signal.SIGTERM)",
                                    "os.kill(1, signal.SIGKILL)",
                                    "os.killpg(0, signal.SIGTERM)"])
def test_the_environment_cannot_pass_for_an_outside_kill(backend, sender):
    """Signals sent from inside never end the sandbox's pid 1; what ends the environment's own
    process group is its own crash."""
    answer = "{'observation': 'alive', 'done': False, 'success': False}"
    step = f"{sender}\ntime.sleep(0.3)\nreturn {answer}"
    with open_sandbox(hostile.environment(step=step), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        try:
            assert sandbox.step("go").observation == "alive"
        except EnvCrashed:
            assert "killpg" in sender


@one_backend
def test_closing_the_channel_and_living_on_is_the_environments_fault(backend):
    step = "os.closerange(3, 1024)\ntime.sleep(30)\n"
    with open_sandbox(hostile.environment(step=step), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises((EnvCrashed, SandboxTimeout)):
            sandbox.step("go")


def _wait_statuses():
    """Every wait status a guest proper can end with: each exit code and each signal."""
    yield from ((code << 8, f"exit {code}") for code in range(256))
    yield from ((signum, f"signal {signum}") for signum in range(1, 65))


def test_pid_1_reports_every_end_of_the_guest_below_128():
    from sandbox_runner.backends.base import describe_exit
    from sandbox_runner.guest import guest_namespace

    guest = guest_namespace()
    for status, how in _wait_statuses():
        reported = guest["guest_end_status"](status)
        assert 0 <= reported < 128, how
        error = describe_exit(reported, "")
        # Whatever the environment did to its own process, it is never the infrastructure's.
        assert isinstance(error, (EnvCrashed, SandboxTimeout)), (how, error)
        assert isinstance(error, SandboxTimeout) is (how == f"signal {signal.SIGXCPU}"), how


def test_only_an_end_from_outside_is_the_infrastructures():
    from sandbox_runner.backends.base import describe_exit

    outside = [None, *range(-64, 0), *range(128, 256)]
    for status in outside:
        error = describe_exit(status, "envduels guest: the environment's process exited")
        if status == -signal.SIGXCPU:
            assert isinstance(error, SandboxTimeout)  # unsafe-local: the host's CPU limit
        else:
            assert isinstance(error, SandboxCrashed) and not isinstance(error, EnvCodeError)
