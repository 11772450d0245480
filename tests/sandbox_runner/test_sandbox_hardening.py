"""Issue 13, sandbox: whole-sandbox memory and process limits, no nested namespaces or
dangerous syscalls, and forged guest replies - on every backend present, next to a healthy
neighbour (see conftest.py). That a forged reply gets through is shown on every backend; how the
host judges each forged value is its own logic, shown on the quickest (`@one_backend`)."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from sandbox_runner import EnvCodeError, SandboxMemoryExceeded, open_sandbox
from tests.sandbox_runner import hostile
from tests.sandbox_runner.conftest import MIB, TEST_LIMITS, one_backend

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("neighbour")]
# The case: six children of 200 MB each against a 256 MiB sandbox.
WHOLE_SANDBOX_LIMITS = replace(TEST_LIMITS, memory_bytes=256 * MIB, call_timeout=60.0,
                               episode_timeout=90.0)


def test_forked_children_cannot_hold_more_than_the_sandbox_memory(backend):
    code = hostile.environment(step=hostile.FORK_CHILDREN_HOLDING_MEMORY)
    started = time.monotonic()
    with pytest.raises(SandboxMemoryExceeded, match="memory"), open_sandbox(
            code, limits=WHOLE_SANDBOX_LIMITS, backend=backend) as sandbox:
        sandbox.reset(seed=0)
        sandbox.step("go")  # before the fix: "6 children hold 200 MB each" (1.2 GB)
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("backend", ["bwrap", "unshare"], indirect=True)
def test_the_sandbox_cgroup_holds_every_process_and_goes_away(backend):
    with open_sandbox(hostile.environment(), limits=TEST_LIMITS, backend=backend) as sandbox:
        sandbox.reset(seed=0)
        memory, pids = sandbox.process.cgroup.directories[0], sandbox.process.cgroup.directories[-1]
        assert int((memory / "memory.limit_in_bytes").read_text()) == TEST_LIMITS.memory_bytes
        swap_limit = memory / "memory.memsw.limit_in_bytes"
        if swap_limit.exists():
            assert int(swap_limit.read_text()) == TEST_LIMITS.memory_bytes
        assert int((pids / "pids.max").read_text()) >= TEST_LIMITS.max_processes
        launcher = sandbox.process.popen.pid
        assert str(launcher) in (memory / "cgroup.procs").read_text().split()
        assert str(launcher) in (pids / "cgroup.procs").read_text().split()
    assert not memory.exists() and not pids.exists()


def test_nested_namespaces_mounts_and_filtered_syscalls_fail(backend):
    observation = step_observation(backend, hostile.NESTED_NAMESPACES)
    assert "NoNewPrivs: 1" in observation and "Seccomp: 2" in observation
    assert "succeeded" not in observation, observation
    for attempt in ("unshare user", "unshare user+mount", "unshare mount", "mount"):
        assert f"{attempt} failed: errno 1" in observation  # EPERM


def step_observation(backend: str, step_body: str) -> str:
    with open_sandbox(hostile.environment(step=step_body), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        return sandbox.step("go").observation


@one_backend
@pytest.mark.parametrize("max_steps", [10**9, -5, 0, 201, True, 3.0, "30", None])
def test_a_forged_max_steps_is_refused(backend, max_steps):
    with pytest.raises(EnvCodeError, match="max_steps"), open_sandbox(
            hostile.forged_load(max_steps=max_steps), limits=TEST_LIMITS, backend=backend):
        pass


def test_the_forgery_is_real_a_forged_valid_value_is_what_the_host_sees(backend):
    with open_sandbox(hostile.forged_load(max_steps=30), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        assert sandbox.max_steps == 30  # the class says 10: the forged reply got through
        assert sandbox.reset(seed=0) == "ready"


def test_a_forged_has_reference_must_be_a_bool(backend):
    with pytest.raises(EnvCodeError, match="has_reference"), open_sandbox(
            hostile.forged_load(max_steps=10, has_reference="yes"), limits=TEST_LIMITS,
            backend=backend):
        pass
