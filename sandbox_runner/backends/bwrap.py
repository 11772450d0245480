"""bubblewrap backend: new user/pid/net/ipc/uts namespaces (no nested user namespaces),
read-only /usr, tmpfs /tmp; the guest adds its seccomp filter."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache

from sandbox_runner.backends.base import (
    CLEAN_ENV,
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


class BwrapBackend(CgroupBackend):
    name = "bwrap"

    def bwrap_command(self, limits: SandboxLimits, command: list[str]) -> list[str]:
        bwrap = shutil.which("bwrap") or "bwrap"
        args = [
            bwrap, "--unshare-all", "--unshare-user", *disable_userns_option(bwrap),
            "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv",
            "--setenv", "PATH", CLEAN_ENV["PATH"], "--setenv", "LANG", CLEAN_ENV["LANG"],
            "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr",
        ]
        for name, target in system_links():
            args += ["--symlink", target, "/" + name]
        for name in system_dirs():
            args += ["--ro-bind", "/" + name, "/" + name]
        args += [
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmpfs_bytes), "--perms", "1777", "--tmpfs", "/tmp",
            "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--",
        ]
        return [*drop_to_nobody_prefix(NOBODY, NOBODY), *args, *command]

    def unavailable_reason(self) -> str | None:
        if not shutil.which("bwrap"):
            return "bubblewrap is not installed (apt-get install bubblewrap)"
        if not shutil.which(SANDBOX_PYTHON):
            return f"{SANDBOX_PYTHON} is missing (apt-get install python3)"
        probe = self.bwrap_command(SandboxLimits(), [SANDBOX_PYTHON, "-S", "-I", "-c", "pass"])
        return namespace_probe("bwrap", probe, dict(CLEAN_ENV))

    def start(self, limits: SandboxLimits) -> PopenSandboxProcess:
        return self.start_process(limits, self.bwrap_command(limits, guest_command(limits)))
