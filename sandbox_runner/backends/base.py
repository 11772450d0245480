"""What every sandbox backend provides: a probe, and a way to start one guest process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from abc import ABC, abstractmethod

from sandbox_runner.cgroups import CgroupUnavailable, SandboxCgroup, cgroup_support
from sandbox_runner.errors import (
    EnvCrashed,
    SandboxCrashed,
    SandboxError,
    SandboxMemoryExceeded,
    SandboxTimeout,
    SandboxUnavailable,
)
from sandbox_runner.guest import GUEST_BOOTSTRAP, guest_source
from sandbox_runner.limits import SandboxLimits
from sandbox_runner.protocol import PipeTransport, Transport

# The only variables a sandbox (and the launcher in front of it) ever sees.
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8"}
# What a guest started by a launcher that clears the environment gets: string hashing pinned
# from the start, so the guest never re-executes itself to pin it (one interpreter start, not two).
GUEST_ENV = {**CLEAN_ENV, "PYTHONHASHSEED": "0"}
# The options of -I but -E: with only GUEST_ENV's variables, -E would only drop the hash seed.
PINNED_FLAGS = ("-S", "-s", "-P")
SANDBOX_PYTHON = "/usr/bin/python3"
NOBODY = 65534


class SandboxProcess(ABC):
    """One started guest: its transport, and how to kill it and explain how it ended."""

    backend_name: str
    transport: Transport

    @abstractmethod
    def alive(self) -> bool: ...

    @abstractmethod
    def kill(self) -> None:
        """Kill every process of the sandbox and release its resources; safe to call twice."""

    @abstractmethod
    def exit_error(self, stderr_tail: str) -> SandboxError:
        """Return the error describing why the guest ended on its own."""


class PopenSandboxProcess(SandboxProcess):
    """A guest behind a local launcher process (bwrap, unshare, or none).

    With a `cgroup` the launcher joins it before it execs anything, so every process of the
    sandbox counts against the cgroup's memory and process limits; it is removed on kill.
    """

    def __init__(self, backend_name: str, command: list[str],
                 cgroup: SandboxCgroup | None = None, pass_fds: tuple[int, ...] = ()) -> None:
        self.backend_name = backend_name
        self.cgroup = cgroup
        if cgroup is not None:
            command = [*cgroup.join_command(), *command]
        try:
            # start_new_session and close_fds happen in C after fork: safe in a threaded server.
            self.popen = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=dict(GUEST_ENV),
                cwd="/",
                close_fds=True,
                pass_fds=pass_fds,
                start_new_session=True,
            )
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            raise
        self.transport = PipeTransport(
            self.popen.stdin.fileno(), self.popen.stdout.fileno(), self.popen.stderr.fileno()
        )
        if cgroup is not None and cgroup.alarm_fd is not None:
            self.transport.add_memory_alarm(cgroup.alarm_fd, memory_message(cgroup.memory_bytes),
                                            cgroup.directories[0].exists)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        if self.popen.poll() is None:
            try:
                # The launcher leads its own session; killing the group reaches any helper too.
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        if self.cgroup is not None:
            self.cgroup.remove()

    def exit_error(self, stderr_tail: str) -> SandboxError:
        try:
            status = self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            # Its channel closed, yet the sandbox runs on: nothing outside closes a pipe without
            # killing the process, so the environment closed it.
            return EnvCrashed("the environment closed the sandbox's channel and kept running\n"
                              + stderr_tail[-2000:])
        if self.cgroup is not None and self.cgroup.memory_exceeded():
            return SandboxMemoryExceeded(memory_message(self.cgroup.memory_bytes))
        return describe_exit(status, stderr_tail)


def memory_message(memory_bytes: int) -> str:
    return (f"the environment went over the sandbox's memory limit of "
            f"{memory_bytes // (1024 * 1024)} MiB (all its processes together)")


# How the guest's pid 1 reports the end of the guest proper (see the guest's become_reaper):
# its exit code up to 63, or 64 + the signal that killed it; never 128 or above.
SIGNAL_BASE, OUTSIDE_BASE = 64, 128


def describe_exit(status: int | None, stderr_tail: str) -> SandboxError:
    """Map the sandbox's exit status, as its launcher or engine reports it, to the matching
    error: None (unknown) or negative (the launcher killed by that signal) or 128 and above
    (the sandbox's pid 1 killed by a signal, which only a sender outside the namespace can do)
    is the sandbox killed from outside, an infrastructure fault; below 128 the guest proper
    ended during a call, which is the environment's doing (EnvCrashed). Nothing the guest
    prints decides this: the log tail is only shown."""
    tail = stderr_tail[-2000:]
    if status == -signal.SIGXCPU:  # no pid 1 of ours in front (unsafe-local)
        return SandboxTimeout("the environment used up its CPU time")
    if status is None:
        return SandboxCrashed(f"the sandbox ended and its launcher or engine could not say how "
                              f"(gone or not answering)\n{tail}".rstrip())
    if status < 0 or status >= OUTSIDE_BASE:
        signum = -status if status < 0 else status - OUTSIDE_BASE
        how = f"status {status}" + (f", signal {signal_name(signum)}" if signum else "")
        return SandboxCrashed(f"the sandbox was killed from outside ({how})\n{tail}".rstrip())
    if status > SIGNAL_BASE:
        signum = status - SIGNAL_BASE
        if signum == signal.SIGXCPU:
            return SandboxTimeout("the environment used up its CPU time")
        return EnvCrashed(f"the environment's process was killed by {signal_name(signum)} "
                          f"(status {status})\n{tail}".rstrip())
    last_line = tail.strip().splitlines()[-1] if tail.strip() else ""
    if "MemoryError" in last_line:
        return SandboxMemoryExceeded(f"the environment ran out of memory\n{tail}")
    return EnvCrashed(f"the environment ended its own process (status {status})\n{tail}".rstrip())


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def guest_command(limits: SandboxLimits, python: str = SANDBOX_PYTHON,
                  count_processes: bool = True, channel_dir: str | None = None,
                  seccomp: bool = True, env_pinned: bool = True,
                  compiled: bool = False) -> list[str]:
    """Return the command that runs the guest: lean start-up, source passed inline.

    With `channel_dir` the guest speaks the protocol over the FIFOs in that directory; with
    `seccomp` it filters its own syscalls before loading any environment code. `env_pinned`:
    the launcher gives the guest exactly GUEST_ENV, so it starts with PINNED_FLAGS; otherwise
    (an image's own variables) it starts under -I and pins the hash seed by re-executing.
    `compiled`: the launcher puts `guest_code(python)` at GUEST_CODE_IN_SANDBOX.
    """
    channel = [channel_dir] if channel_dir else []
    flags = PINNED_FLAGS if env_pinned else ("-S", "-I")
    program = GUEST_BOOTSTRAP if compiled else guest_source()
    return [python, *flags, "-c", program, *limits.guest_args(
        count_processes=count_processes, seccomp=seccomp), *channel]


class Backend(ABC):
    """A kind of sandbox. Subclasses live one per module in this package."""

    name: str

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """Return None when this backend works here right now, else what is missing."""

    @abstractmethod
    def start(self, limits: SandboxLimits) -> SandboxProcess:
        """Start a fresh, empty sandbox running the guest (nothing loaded yet)."""

    def whole_sandbox_limits_reason(self) -> str | None:
        """None when memory and process limits hold for the whole sandbox, else why not."""
        return None


class CgroupBackend(Backend):
    """A local backend (bwrap, unshare) that puts each sandbox in its own cgroup when it can."""

    def whole_sandbox_limits_reason(self) -> str | None:
        _layout, reason = cgroup_support()
        if reason is None:
            return None
        return (f"no per-sandbox cgroup ({reason}); memory and process limits hold per "
                "process only (rlimits)")

    def sandbox_cgroup(self, limits: SandboxLimits) -> SandboxCgroup | None:
        """A fresh cgroup for one sandbox, or None where this machine offers none."""
        layout, _reason = cgroup_support()
        if layout is None:
            return None
        try:
            return SandboxCgroup(layout, limits)
        except CgroupUnavailable as error:
            raise SandboxUnavailable(str(error)) from error

    def start_process(self, limits: SandboxLimits, command: list[str],
                      pass_fds: tuple[int, ...] = ()) -> PopenSandboxProcess:
        return PopenSandboxProcess(self.name, command, cgroup=self.sandbox_cgroup(limits),
                                   pass_fds=pass_fds)
