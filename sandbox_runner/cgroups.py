"""One cgroup per bwrap or unshare sandbox, so memory and processes are limited for the whole
sandbox, not per process (RLIMIT_AS and RLIMIT_NPROC stay as a second fence).

cgroup v2 is used where the unified hierarchy offers the `memory` and `pids` controllers, else
the v1 `memory` and `pids` hierarchies. Each sandbox gets `envduels-sandbox-<pid>-<start>-<id>`
below this process's own cgroup (so limits set above us still hold): memory with no swap,
pids.max, and an OOM signal. The launcher joins it before anything else runs; `remove()` kills
what is left and deletes it; cgroups of dead processes are swept on first use.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox_runner.limits import SandboxLimits

logger = logging.getLogger(__name__)

PREFIX = "envduels-sandbox-"
CONTROLLERS = ("memory", "pids")
# Processes of the launcher itself (bwrap's monitor and init, unshare and its setup shell).
LAUNCHER_PROCESSES = 4
PROBE_TTL = 60.0


class CgroupUnavailable(Exception):
    """No per-sandbox cgroup can be made here; the message says why."""


@dataclass(frozen=True)
class CgroupLayout:
    """Where sandbox cgroups are made: v2 (one directory) or v1 (memory and pids)."""

    version: int
    parents: tuple[Path, ...]  # v1: (memory parent, pids parent); v2: (unified parent,)


def cgroup_mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """Return (fstype, root, mount point, super options) of every cgroup mount."""
    mounts = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        if after and after[0] in ("cgroup", "cgroup2"):
            options = set(after[2].split(",")) if len(after) > 2 else set()
            mounts.append((after[0], fields[3], fields[4].replace("\\040", " "), options))
    return mounts


def own_cgroups(proc_cgroup: str) -> dict[str, str]:
    """Map each v1 controller (and "" for v2) to this process's cgroup path."""
    paths = {}
    for line in proc_cgroup.splitlines():
        _number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def mounted_path(mount_point: str, root: str, path: str) -> Path:
    """Return where cgroup `path` appears under a mount of the hierarchy's `root`."""
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root):]
    return Path(mount_point + path.rstrip("/"))


def cgroup_layout_discover(mountinfo: str, proc_cgroup: str) -> CgroupLayout:
    """Return the layout to use here, or raise CgroupUnavailable saying why there is none."""
    mounts, own = cgroup_mounts(mountinfo), own_cgroups(proc_cgroup)
    reasons = []
    for fstype, root, mount_point, _options in mounts:
        if fstype == "cgroup2" and "" in own:
            parent = mounted_path(mount_point, root, own[""])
            offered = read_text(parent / "cgroup.controllers").split()
            if all(name in offered for name in CONTROLLERS):
                delegate_v2_controllers(parent)
                return CgroupLayout(2, (parent,))
            reasons.append(f"cgroup v2 at {mount_point} offers no memory and pids controllers")
    parents = []
    for controller in CONTROLLERS:
        found = [(root, point) for fstype, root, point, options in mounts
                 if fstype == "cgroup" and controller in options and controller in own]
        if not found:
            reasons.append(f"no cgroup v1 {controller} hierarchy is mounted")
            break
        parents.append(mounted_path(found[0][1], found[0][0], own[controller]))
    else:
        return CgroupLayout(1, tuple(parents))
    raise CgroupUnavailable("; ".join(reasons))


def delegate_v2_controllers(parent: Path) -> None:
    """Make sure child cgroups of `parent` get the memory and pids controllers."""
    enabled = read_text(parent / "cgroup.subtree_control").split()
    missing = [name for name in CONTROLLERS if name not in enabled]
    if not missing:
        return
    try:
        write_value(parent / "cgroup.subtree_control", " ".join(f"+{name}" for name in missing))
    except OSError as error:
        raise CgroupUnavailable(
            f"cgroup v2: {parent} does not pass {' and '.join(missing)} on to its children and "
            f"enabling them failed ({error.strerror}; a cgroup that holds processes cannot); "
            "start the service in a delegated cgroup (systemd: Delegate=yes)") from error


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def write_value(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


_live: set[SandboxCgroup] = set()  # made by this process and not removed yet
_live_lock = threading.Lock()


@atexit.register
def cgroups_remove_at_exit() -> None:
    """Remove the cgroups of sandboxes nobody closed (their processes die with us anyway)."""
    with _live_lock:
        leftover = list(_live)
    for cgroup in leftover:
        cgroup.remove()


_probe_lock = threading.Lock()
_probe: tuple[float, CgroupLayout | None, str | None] | None = None
_swept: set[Path] = set()


def cgroup_support(*, fresh: bool = False) -> tuple[CgroupLayout | None, str | None]:
    """Return (layout, None) when sandbox cgroups work here, else (None, why not).

    The answer comes from really making (and removing) a limited cgroup; it is kept a minute.
    """
    global _probe
    with _probe_lock:
        now = time.monotonic()
        if _probe is None or fresh or now - _probe[0] > PROBE_TTL:
            try:
                layout = cgroup_layout_discover(read_text(Path("/proc/self/mountinfo")),
                                                read_text(Path("/proc/self/cgroup")))
                for parent in layout.parents:
                    if parent not in _swept:
                        _swept.add(parent)
                        cgroup_sweep(parent)
                SandboxCgroup(layout, SandboxLimits()).remove()
                _probe = (now, layout, None)
            except CgroupUnavailable as error:
                _probe = (now, None, str(error))
        return _probe[1], _probe[2]


def process_start_time(pid: int) -> str:
    """The start time of `pid` in clock ticks since boot ("" when it is gone)."""
    stat = read_text(Path(f"/proc/{pid}/stat"))
    return stat.rpartition(")")[2].split()[19] if stat else ""


def cgroup_sweep(parent: Path) -> int:
    """Kill and remove sandbox cgroups in `parent` whose owning process has ended."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(PREFIX) or not entry.is_dir():
                continue
            owner, _, rest = entry.name[len(PREFIX):].partition("-")
            started = rest.partition("-")[0]
            if owner.isdigit() and process_start_time(int(owner)) != started:
                removed += cgroup_empty_and_remove([entry])
    return removed


def cgroup_empty_and_remove(directories: list[Path], wait: float = 2.0) -> int:
    """Kill every process in `directories`, then remove them; return how many went."""
    for directory in directories:
        if (directory / "pids.max").exists():
            with contextlib.suppress(OSError):
                write_value(directory / "pids.max", "0")  # no new forks while we kill
        if (directory / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                write_value(directory / "cgroup.kill", "1")
    deadline = time.monotonic() + wait
    removed = 0
    pending = list(directories)
    while pending:
        for directory in list(pending):
            for pid in read_text(directory / "cgroup.procs").split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
            try:
                directory.rmdir()
            except FileNotFoundError:
                pending.remove(directory)
            except OSError:
                continue
            else:
                pending.remove(directory)
                removed += 1
        if pending and time.monotonic() > deadline:
            logger.warning("could not remove sandbox cgroups %s yet; the next start-up sweep "
                           "removes them", [str(path) for path in pending])
            break
        if pending:
            time.sleep(0.01)
    return removed


def oom_eventfd(memory_dir: Path) -> int:
    """Return an eventfd the kernel signals when the v1 memory cgroup `memory_dir` runs out of
    memory (and when the cgroup is removed: check that it still exists)."""
    alarm = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
    try:
        control = os.open(memory_dir / "memory.oom_control", os.O_RDONLY | os.O_CLOEXEC)
        try:
            write_value(memory_dir / "cgroup.event_control", f"{alarm} {control}")
        finally:
            os.close(control)
    except OSError:
        os.close(alarm)
        raise
    return alarm


def process_oom_eventfd(pid: int) -> tuple[int, Path] | None:
    """An OOM eventfd for the v1 memory cgroup of host process `pid` (a Docker container's init)
    and that cgroup's directory, or None where it is not reachable from here (v2, a remote
    engine, no rights)."""
    own = own_cgroups(read_text(Path(f"/proc/{pid}/cgroup")))
    mounts = cgroup_mounts(read_text(Path("/proc/self/mountinfo")))
    for fstype, root, mount_point, options in mounts:
        if fstype == "cgroup" and "memory" in options and "memory" in own:
            memory_dir = mounted_path(mount_point, root, own["memory"])
            with contextlib.suppress(OSError):
                return oom_eventfd(memory_dir), memory_dir
    return None


def oom_happened(memory_dir: Path, version: int = 1) -> bool:
    """Whether the kernel is killing, or had to kill, for memory in cgroup `memory_dir`."""
    if version == 2:
        text, names = read_text(memory_dir / "memory.events"), ("oom_kill", "oom_group_kill")
    else:
        text, names = read_text(memory_dir / "memory.oom_control"), ("oom_kill", "under_oom")
    counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
    return any(counts.get(name, "0") != "0" for name in names)


class SandboxCgroup:
    """The cgroup(s) of one sandbox, with its limits written; `remove()` when it ends."""

    def __init__(self, layout: CgroupLayout, limits: SandboxLimits) -> None:
        self.layout = layout
        self.memory_bytes = limits.memory_bytes
        name = f"{PREFIX}{os.getpid()}-{process_start_time(os.getpid())}-{secrets.token_hex(4)}"
        self.directories = [parent / name for parent in layout.parents]
        self.alarm_fd: int | None = None
        self.removed = False
        with _live_lock:
            _live.add(self)
        try:
            for directory in self.directories:
                directory.mkdir()
            self.apply(limits.memory_bytes, limits.max_processes + LAUNCHER_PROCESSES)
            if layout.version == 1:
                self.alarm_fd = self.oom_eventfd()
        except OSError as error:
            self.remove()
            raise CgroupUnavailable(f"cannot set up a sandbox cgroup in "
                                    f"{self.directories[0].parent}: {error}") from error

    def apply(self, memory_bytes: int, max_processes: int) -> None:
        memory, pids = self.directories[0], self.directories[-1]
        if self.layout.version == 2:
            write_value(memory / "memory.max", str(memory_bytes))
            if (memory / "memory.swap.max").exists():
                write_value(memory / "memory.swap.max", "0")
            write_value(memory / "memory.oom.group", "1")  # one OOM kill takes the sandbox
        else:
            write_value(memory / "memory.limit_in_bytes", str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():
                write_value(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
            else:  # no swap accounting on this kernel: keep the sandbox out of swap instead
                write_value(memory / "memory.swappiness", "0")
        write_value(pids / "pids.max", str(max_processes))

    def oom_eventfd(self) -> int:
        return oom_eventfd(self.directories[0])

    def join_command(self) -> list[str]:
        """Return the prefix that moves the launcher into this cgroup, then execs the rest."""
        joins = " && ".join(f'echo $$ > "${index}"'
                            for index in range(1, len(self.directories) + 1))
        return ["/bin/sh", "-c", f'{joins} && shift {len(self.directories)} && exec "$@"',
                "envduels-cgroup-join",
                *[str(directory / "cgroup.procs") for directory in self.directories]]

    def memory_exceeded(self) -> bool:
        """Whether the kernel had to kill a process of this sandbox for memory."""
        return oom_happened(self.directories[0], self.layout.version)

    def remove(self) -> None:
        """Kill every process left in the sandbox's cgroup and delete it. Safe to call twice."""
        if self.removed:
            return
        self.removed = True
        with _live_lock:
            _live.discard(self)
        if self.alarm_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.alarm_fd)
        cgroup_empty_and_remove([path for path in self.directories if path.exists()])
