"""util-linux unshare backend: namespaces, a pivot_root into a read-only view, rlimits."""

from __future__ import annotations

import shlex
import shutil

from sandbox_runner.backends.base import (
    CLEAN_ENV,
    NOBODY,
    SANDBOX_PYTHON,
    CgroupBackend,
    PopenSandboxProcess,
    guest_command,
)
from sandbox_runner.backends.local_layout import (
    DEVICES,
    drop_to_nobody_prefix,
    namespace_probe,
    system_dirs,
    system_links,
)
from sandbox_runner.limits import SandboxLimits


def root_setup_script() -> str:
    """Return the shell script run as root *of the new user namespace* before the guest.

    It names the host "sandbox", builds a fresh root on a small tmpfs (read-only /usr, proc, a
    few devices, a size-capped /tmp), pivots into it, makes it read-only, then execs "$@" with
    every capability dropped and no-new-privs: the guest replaces the shell as pid 1, so no
    process of the sandbox runs without the guest's seccomp filter.
    """
    lines = [
        "set -e",
        'tmpfs_size="$1"; shift',
        "hostname sandbox",
        "mount -t tmpfs -o size=4m,mode=0755 sandbox-root /tmp",
        "cd /tmp",
        "mkdir usr proc dev tmp .old",
        "mount --rbind /usr usr",
        "mount -o remount,bind,ro usr",
    ]
    for name, target in system_links():
        lines.append(f"ln -s {shlex.quote(target)} {name}")
    for name in system_dirs():
        lines += [f"mkdir {name}", f"mount --rbind /{name} {name}",
                  f"mount -o remount,bind,ro {name}"]
    lines += [
        "mount -t proc -o nosuid,nodev,noexec proc proc",
        f"for device in {' '.join(DEVICES)}; do",
        '  touch "dev/$device"; mount --bind "/dev/$device" "dev/$device"',
        "done",
        "ln -s /proc/self/fd dev/fd",
        'mount -t tmpfs -o "size=$tmpfs_size,mode=1777,nosuid,nodev" tmpfs tmp',
        "pivot_root . .old",
        "umount -l /.old",
        "rmdir /.old",
        "mount -o remount,bind,ro /",
        "cd /tmp",
        'exec /usr/bin/setpriv --no-new-privs --inh-caps=-all --bounding-set=-all -- "$@"',
    ]
    return "\n".join(lines)


class UnshareBackend(CgroupBackend):
    name = "unshare"

    def unshare_command(self, limits: SandboxLimits, command: list[str]) -> list[str]:
        unshare = shutil.which("unshare") or "unshare"
        args = [
            unshare, "--user", "--map-root-user", "--mount", "--net", "--pid", "--ipc", "--uts",
            "--cgroup", "--fork", "--kill-child", "--",
            "/bin/sh", "-c", root_setup_script(), "sandbox-setup", str(limits.tmpfs_bytes),
        ]
        return [*drop_to_nobody_prefix(NOBODY, NOBODY), *args, *command]

    def unavailable_reason(self) -> str | None:
        for tool, package in (("unshare", "util-linux"), ("setpriv", "util-linux"),
                              ("hostname", "hostname")):
            if not shutil.which(tool):
                return f"{tool} is not installed (apt-get install {package})"
        if not shutil.which(SANDBOX_PYTHON):
            return f"{SANDBOX_PYTHON} is missing (apt-get install python3)"
        probe = self.unshare_command(SandboxLimits(), [SANDBOX_PYTHON, "-S", "-I", "-c", "pass"])
        return namespace_probe("unshare", probe, dict(CLEAN_ENV))

    def start(self, limits: SandboxLimits) -> PopenSandboxProcess:
        return self.start_process(limits, self.unshare_command(limits, guest_command(limits)))
