"""bubblewrap backend: new user/pid/net/ipc/uts namespaces (no nested user namespaces),
read-only /usr, tmpfs /tmp. bwrap installs the guest's seccomp filter before it execs the guest,
and the guest runs as pid 1 (no unfiltered reaper of bwrap's own in the sandbox)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from itertools import chain

from sandbox_runner.backends.base import (
    CLEAN_ENV,
    GUEST_ENV,
    NOBODY,
    SANDBOX_PYTHON,
    CgroupBackend,
    PopenSandboxProcess,
    guest_command,
)
from sandbox_runner.backends.local_layout import (
    drop_to_nobody_prefix,
    namespace_probe,
    system_dirs,
    system_links,
)
from sandbox_runner.errors import SandboxUnavailable
from sandbox_runner.guest import GUEST_CODE_IN_SANDBOX, guest_code, seccomp_program
from sandbox_runner.limits import SandboxLimits


@cache
def disable_userns_option(bwrap: str) -> list[str]:
    """["--disable-userns"] where this bubblewrap has it (0.8 and later), else [] and the
    guest's seccomp filter alone refuses nested user namespaces."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["--disable-userns"] if b"--disable-userns" in done.stdout + done.stderr else []


@cache
def _filter() -> bytes:
    return seccomp_program()


@contextlib.contextmanager
def data_fd(name: str, data: bytes) -> Iterator[int]:
    """An fd holding `data` from its start, for bwrap to read to its end (--seccomp,
    --ro-bind-data) in the sandbox's first process."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def seccomp_fd() -> Iterator[int]:
    """An fd holding the guest's compiled seccomp filter, for bwrap's --seccomp (it installs
    the filter before the exec)."""
    try:
        program = _filter()
    except OSError as error:
        raise SandboxUnavailable(str(error)) from error
    with data_fd("envduels-seccomp", program) as fd:
        yield fd


class BwrapBackend(CgroupBackend):
    name = "bwrap"

    def bwrap_command(self, limits: SandboxLimits, command: list[str],
                      filter_fd: int, code_fd: int | None = None) -> list[str]:
        """The launcher's command; with `code_fd` the guest's compiled code (guest_code) is
        placed, read-only, at GUEST_CODE_IN_SANDBOX."""
        bwrap = shutil.which("bwrap") or "bwrap"
        args = [
            bwrap, "--unshare-all", "--unshare-user", *disable_userns_option(bwrap),
            "--as-pid-1", "--seccomp", str(filter_fd),
            "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv",
            *chain.from_iterable(("--setenv", name, value) for name, value in GUEST_ENV.items()),
            "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr",
        ]
        for name, target in system_links():
            args += ["--symlink", target, "/" + name]
        for name in system_dirs():
            args += ["--ro-bind", "/" + name, "/" + name]
        args += [
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmpfs_bytes), "--perms", "1777", "--tmpfs", "/tmp",
        ]
        if code_fd is not None:
            args += ["--ro-bind-data", str(code_fd), GUEST_CODE_IN_SANDBOX]
        args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--"]
        return [*drop_to_nobody_prefix(NOBODY, NOBODY), *args, *command]

    def unavailable_reason(self) -> str | None:
        if not shutil.which("bwrap"):
            return "bubblewrap is not installed (apt-get install bubblewrap)"
        if not shutil.which(SANDBOX_PYTHON):
            return f"{SANDBOX_PYTHON} is missing (apt-get install python3)"
        with seccomp_fd() as filter_fd:
            probe = self.bwrap_command(SandboxLimits(), [SANDBOX_PYTHON, "-S", "-I", "-c", "pass"],
                                       filter_fd)
            return namespace_probe("bwrap", probe, dict(CLEAN_ENV), pass_fds=(filter_fd,))

    def start(self, limits: SandboxLimits) -> PopenSandboxProcess:
        try:
            code = guest_code(SANDBOX_PYTHON)
        except OSError as error:
            raise SandboxUnavailable(str(error)) from error
        with seccomp_fd() as filter_fd, data_fd("envduels-guest", code) as code_fd:
            command = self.bwrap_command(limits, guest_command(limits, compiled=True),
                                         filter_fd, code_fd)
            return self.start_process(limits, command, pass_fds=(filter_fd, code_fd))
