"""Every hostile environment of issue 3, next to a healthy neighbour: on every backend present,
except the few whose claim is the guest's or the host's own logic (`@one_backend`: a value the
guest refuses, a reply line the host refuses), which run on the quickest.

Each test asserts the error type a user would see; the `neighbour` fixture asserts that a second
sandbox kept answering the whole time and that a brand-new sandbox works afterwards.
"""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path

import pytest

from sandbox_runner import (
    EnvCodeError,
    EnvCrashed,
    SandboxLimits,
    SandboxMemoryExceeded,
    SandboxOutputExceeded,
    SandboxTimeout,
    StepResult,
    open_sandbox,
)
from sandbox_runner.pool import POOL
from tests.sandbox_runner import hostile
from tests.sandbox_runner.conftest import TEST_LIMITS, TIMEOUT_LIMITS, one_backend

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("neighbour")]
PROJECT_DIR = Path(__file__).resolve().parents[2]


def step_once(backend: str, step_body: str, action: str = "go",
              limits: SandboxLimits = TEST_LIMITS) -> StepResult:
    with open_sandbox(hostile.environment(step=step_body), limits=limits,
                      backend=backend) as sandbox:
        assert sandbox.reset(seed=0) == "ready"
        return sandbox.step(action)


def processes_with_cmdline(fragment: bytes, program: bytes = b"") -> list[int]:
    """Return host pids whose command line contains `fragment` (and starts with `program`)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if fragment in cmdline and cmdline.split(b"\0")[0].endswith(program):
                found.append(int(name))
    return found


def wait_until(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("where", ["reset", "step"])
def test_infinite_loop_times_out(backend, where):
    code = hostile.environment(**{where: hostile.INFINITE_LOOP})
    started = time.monotonic()
    with pytest.raises(SandboxTimeout), open_sandbox(code, limits=TIMEOUT_LIMITS,
                                                     backend=backend) as sandbox:
        sandbox.reset(seed=0)
        sandbox.step("go")
    assert time.monotonic() - started < 10


def test_sleep_forever_times_out(backend):
    with pytest.raises(SandboxTimeout):
        step_once(backend, hostile.SLEEP_FOREVER, limits=TIMEOUT_LIMITS)


def test_memory_bomb_is_reported(backend):
    with pytest.raises(SandboxMemoryExceeded):
        step_once(backend, hostile.MEMORY_BOMB)


def processes_named(name: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and Path(f"/proc/{pid}/comm").read_text().strip() == name:
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_fork_bomb_is_stopped(backend):
    # The bomb's forks share the whole sandbox's memory: it ends on the call timeout or, where
    # the forks reach the sandbox-wide memory limit first, on that limit. Either way it is the
    # environment's fault and the sandbox is gone.
    with pytest.raises((SandboxTimeout, SandboxMemoryExceeded)):
        step_once(backend, hostile.FORK_BOMB, limits=TIMEOUT_LIMITS)


def test_fork_bomb_is_capped_and_leaves_nothing(backend):
    marker = f"fb{random.randint(10**7, 10**8)}"
    code = hostile.environment(step=hostile.NAMED_FORK_BOMB_IN_BACKGROUND)
    with open_sandbox(code, limits=TEST_LIMITS, backend=backend) as sandbox:
        sandbox.reset(seed=0)
        assert sandbox.step(marker).observation == "bombing"
        assert wait_until(lambda: len(processes_named(marker)) >= 10), "the bomb never started"
        time.sleep(0.5)
        assert len(processes_named(marker)) <= TEST_LIMITS.max_processes
    assert wait_until(lambda: not processes_named(marker)), processes_named(marker)


def test_thread_bomb_is_stopped(backend):
    with pytest.raises(EnvCodeError, match="thread"):
        step_once(backend, hostile.THREAD_BOMB)


def test_setsid_child_does_not_outlive_the_episode(backend):
    marker = f"{random.randint(10**6, 10**7)}.25"
    code = hostile.environment(step=hostile.SETSID_SURVIVOR)
    with open_sandbox(code, limits=TEST_LIMITS, backend=backend) as sandbox:
        sandbox.reset(seed=0)
        assert sandbox.step(marker).observation == "spawned"
        assert wait_until(lambda: processes_with_cmdline(marker.encode())), "child never started"
    assert wait_until(lambda: not processes_with_cmdline(marker.encode()))


@pytest.mark.parametrize("flood", ["LOG_FLOOD_STDOUT", "LOG_FLOOD_STDERR"])
def test_gigabyte_of_output_is_cut_off(backend, flood):
    started = time.monotonic()
    with pytest.raises(SandboxOutputExceeded):
        step_once(backend, getattr(hostile, flood))
    assert time.monotonic() - started < 10


def test_gigabyte_in_tmp_hits_the_tmpfs_cap(backend):
    with pytest.raises(EnvCodeError, match="No space|too large"):
        step_once(backend, hostile.TMP_FLOOD)


def test_many_small_files_hit_the_tmpfs_cap(backend):
    with pytest.raises(EnvCodeError, match="No space"):
        step_once(backend, hostile.MANY_FILES)


def test_hundred_megabyte_reply_line_is_rejected(backend):
    with pytest.raises(SandboxOutputExceeded):
        step_once(backend, hostile.HUGE_REPLY_LINE)


@one_backend  # the guest measures the observation; the error is an ordinary reply
def test_oversized_observation_is_rejected(backend):
    body = 'return {"observation": "o" * (1024 * 1024), "done": False, "success": False}'
    with pytest.raises(SandboxOutputExceeded):
        step_once(backend, body)


# The host's reading of a forged line; that forged lines reach it through each backend's channel
# is shown on every backend by test_sandbox_hardening's forgery tests.
@one_backend
@pytest.mark.parametrize("forgery", ["INVALID_UTF8_REPLY", "NAN_REPLY"])
def test_malformed_reply_is_a_protocol_error(backend, forgery):
    with pytest.raises(EnvCodeError, match="invalid reply"):
        step_once(backend, getattr(hostile, forgery))


@one_backend  # the guest's contract check
def test_nan_reward_breaks_the_contract_but_not_the_sandbox(backend):
    body = ('if action == "nan":\n    return {"observation": "x", "done": False, '
            '"success": False, "reward": float("nan")}\n'
            'return {"observation": "fine", "done": False, "success": False}')
    with open_sandbox(hostile.environment(step=body), limits=TEST_LIMITS,
                      backend=backend) as sandbox:
        sandbox.reset(seed=0)
        with pytest.raises(EnvCodeError, match="reward"):
            sandbox.step("nan")
        assert sandbox.step("again").observation == "fine"


def test_fake_replies_land_in_the_log(backend):
    code = hostile.environment(step=hostile.FAKE_REPLIES)
    with open_sandbox(code, limits=TEST_LIMITS, backend=backend) as sandbox:
        sandbox.reset(seed=0)
        result = sandbox.step("go")
        assert result == StepResult("real", False, False, 0.0)
        assert sandbox.step("again").observation == "real"
        assert sandbox.log.count('"observation": "FAKE"') >= 6


def test_network_egress_is_blocked(backend):
    try:
        address = socket.getaddrinfo("deb.debian.org", 80, socket.AF_INET)[0][4][0]
    except OSError:
        address = "1.1.1.1"
    observation = step_once(backend, hostile.NETWORK, action=address).observation
    assert "connected" not in observation
    assert "resolved name" not in observation
    assert "ip blocked" in observation and "name blocked" in observation


def test_host_environment_is_invisible(backend, monkeypatch):
    token = f"sk-honeytoken-{random.randint(10**9, 10**10)}"
    monkeypatch.setenv("ENVDUELS_HONEYTOKEN_API_KEY", token)
    POOL.clear()  # make sure this sandbox starts after the token was set
    observation = step_once(backend, hostile.READ_ENVIRONMENT).observation
    assert "/proc/self/environ" not in observation or "Permission" in observation
    assert token not in observation
    assert "ENVDUELS_HONEYTOKEN_API_KEY" not in observation


def test_host_files_are_unreadable(backend):
    paths = [str(PROJECT_DIR / "envduels_site" / "settings.py"), "/root",
             "/var/run/docker.sock", "/etc/shadow", str(PROJECT_DIR)]
    observation = step_once(backend, hostile.READ_HOST_FILES, action=",".join(paths))
    assert "ENVDUELS_SANDBOX" not in observation.observation
    for path in paths:
        assert f"denied {path}" in observation.observation
    assert "connected" not in observation.observation


def test_writes_outside_tmp_fail(backend):
    target = PROJECT_DIR / "var" / f"pwned-{random.randint(10**6, 10**7)}"
    paths = ["/pwned", "/usr/pwned", "/etc/pwned", "/home/pwned", "/var/tmp/pwned",
             "/dev/shm/pwned", str(target)]
    observation = step_once(backend, hostile.WRITE_OUTSIDE_TMP, action=",".join(paths))
    assert observation.observation == "written: []"
    assert not target.exists()


@pytest.mark.parametrize("attack", ["KILL_PARENT", "KILL_EVERYONE"])
def test_killing_the_parent_or_everyone_stays_inside(backend, attack):
    try:
        result = step_once(backend, getattr(hostile, attack))
    except EnvCrashed:
        return  # the sandbox took itself down; the neighbour fixture checks nobody else was hit
    assert result.observation.startswith("killed")


def test_ignoring_sigterm_still_dies(backend):
    started = time.monotonic()
    with pytest.raises(SandboxTimeout):
        step_once(backend, hostile.IGNORE_SIGTERM, limits=TIMEOUT_LIMITS)
    assert time.monotonic() - started < 10


def test_ctypes_system_runs_only_inside(backend):
    target = PROJECT_DIR / "var" / f"pwned-ctypes-{random.randint(10**6, 10**7)}"
    command = f"touch {target}; cat /root/.bashrc; touch /pwned"
    result = step_once(backend, hostile.CTYPES_SYSTEM, action=command)
    assert result.observation.startswith("status ")
    assert result.observation != "status 0"
    assert not target.exists()


def test_state_does_not_survive_to_the_next_episode(backend):
    code = hostile.environment(step=hostile.LEAVE_STATE)
    for _episode in range(2):
        with open_sandbox(code, limits=TEST_LIMITS, backend=backend) as sandbox:
            sandbox.reset(seed=0)
            assert sandbox.step("go").observation == "found earlier state: False"
            assert sandbox.step("go").observation == "found earlier state: True"
