"""The read-only filesystem view that the bwrap and unshare sandboxes share."""

from __future__ import annotations

import os
import shutil
import subprocess

# Top-level entries Python needs; on merged-/usr systems most of them are symlinks into /usr.
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")


def system_links() -> list[tuple[str, str]]:
    """Return (name, target) for each top-level symlink like /lib -> usr/lib."""
    return [(name, os.readlink("/" + name)) for name in SYSTEM_DIRS
            if os.path.islink("/" + name)]


def system_dirs() -> list[str]:
    """Return the top-level real directories (non-merged-/usr systems) to bind read-only."""
    return [name for name in SYSTEM_DIRS
            if os.path.isdir("/" + name) and not os.path.islink("/" + name)]


def drop_to_nobody_prefix(uid: int, gid: int) -> list[str]:
    """Return the command prefix that runs the launcher as an unprivileged user when we are root.

    A user namespace made by root would map to root's files; starting it as `uid` instead
    means the sandbox can never read /root, the project or the Docker socket. The launcher
    also dies with the thread that started it (pdeathsig), so sandboxes never outlive us.
    """
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    prefix = [setpriv, "--pdeathsig=KILL"]
    if os.geteuid() == 0:
        prefix += [f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    return [*prefix, "--"]


def namespace_probe(name: str, command: list[str], env: dict[str, str],
                    pass_fds: tuple[int, ...] = ()) -> str | None:
    """Run a do-nothing sandboxed command; None when it works, else why (for the error)."""
    try:
        done = subprocess.run(command, capture_output=True, env=env, timeout=10,
                              pass_fds=pass_fds)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{name} could not start: {error}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()[-300:]
        return f"{name} cannot create namespaces here (user namespaces disabled?): {detail}"
    return None
