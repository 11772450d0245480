"""Docker backend: one fresh, locked-down container per sandbox.

Requests and replies travel over a FIFO pair in a private host directory bind-mounted read-only
into the container, which bypasses the engine (the attach stream copies every message through
dockerd). The attach stream still carries the log and signals the container's exit. Once the
guest has opened both FIFOs the host deletes them and their directory, so nothing in the
sandbox can reach the channel by path.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import queue
import shutil
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path

from sandbox_runner.backends.base import (
    NOBODY,
    Backend,
    SandboxProcess,
    describe_exit,
    guest_command,
    memory_message,
)
from sandbox_runner.cgroups import cgroup_mounts, process_oom_eventfd, read_text
from sandbox_runner.errors import SandboxError, SandboxMemoryExceeded, SandboxUnavailable
from sandbox_runner.limits import SandboxLimits, configured_image
from sandbox_runner.protocol import FifoTransport

logger = logging.getLogger(__name__)

LABEL = "envduels.sandbox"
OWNER_LABEL = "envduels.owner"
OWNER = f"{socket.gethostname()}:{os.getpid()}"
# Host side: one private directory per sandbox under CHANNEL_ROOT (mode 0700, owned by us).
CHANNEL_ROOT = Path(tempfile.gettempdir()) / "envduels-sandbox-channels"
CHANNEL_PATH = "/run/envduels-channel"  # where the container sees its own directory
READY_TIMEOUT = 30.0  # a loaded CI machine can take a while to start Python in a container

# Requests in flight at once: every ready sandbox starting, plus the removals.
CONNECTIONS = 64
_client = None
_client_lock = threading.Lock()
_reaped = False
# Containers are removed off the caller's path by daemon threads. At exit we wait a little for
# pending removals, but never for a container dockerd cannot kill promptly: the labelled
# leftover is reaped by the next process that starts a sandbox.
EXIT_REMOVAL_WAIT = 15.0
_removals: queue.Queue = queue.Queue()


def _remove_forever() -> None:
    while True:
        container = _removals.get()
        try:
            container.remove(force=True)
        except Exception as error:  # gone already; the start-up reaper catches any leftover
            logger.info("could not remove sandbox container: %s", error)
        finally:
            _removals.task_done()


for _n in range(2):
    threading.Thread(target=_remove_forever, name=f"sandbox-remove-{_n}", daemon=True).start()


@atexit.register
def _wait_for_removals() -> None:
    deadline = time.monotonic() + EXIT_REMOVAL_WAIT
    while _removals.unfinished_tasks and time.monotonic() < deadline:
        time.sleep(0.05)


def docker_client():
    """Return one shared Docker client, reaping containers left by dead processes first."""
    global _client, _reaped
    with _client_lock:
        if _client is None:
            import docker

            # Generous: removing a container full of fork-bomb processes can take a while.
            _client = docker.from_env(timeout=120, max_pool_size=CONNECTIONS)
        if not _reaped:
            _reaped = True
            reap_stale_containers(_client)
            reap_stale_channel_dirs()
        return _client


@functools.cache
def _local_cgroup_v1_memory() -> bool:
    return any(fstype == "cgroup" and "memory" in options
               for fstype, _root, _mount, options in
               cgroup_mounts(read_text(Path("/proc/self/mountinfo"))))


def memory_alarms_possible(client) -> bool:
    """Whether a container's v1 memory cgroup can be watched from here: the engine listens on
    a local unix socket (a remote engine's process ids mean nothing on this host) and memory is
    a cgroup v1 controller. Elsewhere the container's exit status tells of memory instead."""
    local = getattr(client.api, "base_url", "") == "http+docker://localhost"
    return local and _local_cgroup_v1_memory()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_stale_containers(client) -> int:
    """Remove sandbox containers whose owning process (on this host) no longer exists."""
    removed = 0
    host = socket.gethostname()
    try:
        containers = client.api.containers(all=True, filters={"label": LABEL})
    except Exception as error:  # the probe reports an unreachable engine; reap next time
        logger.info("could not list sandbox containers: %s", error)
        return 0
    for container in containers:
        labels = container.get("Labels") or {}
        owner_host, _, owner_pid = labels.get(OWNER_LABEL, "").rpartition(":")
        if owner_host == host and owner_pid.isdigit() and not pid_alive(int(owner_pid)):
            try:
                client.api.remove_container(container["Id"], force=True)
                removed += 1
            except Exception as error:  # already gone, or the engine is busy: try next time
                logger.info("could not reap sandbox container %s: %s", container["Id"][:12],
                            error)
    return removed


def reap_stale_channel_dirs() -> int:
    """Remove channel directories left by dead processes (named envduels-PID-...)."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in CHANNEL_ROOT.iterdir():
            _prefix, _, rest = entry.name.partition("-")
            pid = rest.partition("-")[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
    return removed


def make_channel_dir() -> Path:
    """Create a fresh private directory holding the FIFOs `in` and `out`, owned by the sandbox
    user (when we are root; otherwise our own, reachable only through the bind mount)."""
    CHANNEL_ROOT.mkdir(mode=0o700, exist_ok=True)
    root = os.lstat(CHANNEL_ROOT)
    if not stat.S_ISDIR(root.st_mode) or root.st_uid != os.geteuid():
        raise SandboxUnavailable(f"{CHANNEL_ROOT} is not a directory of ours; remove it")
    os.chmod(CHANNEL_ROOT, 0o700)
    directory = Path(tempfile.mkdtemp(prefix=f"envduels-{os.getpid()}-", dir=CHANNEL_ROOT))
    try:
        for name in ("in", "out"):
            os.mkfifo(directory / name, 0o600)
        if os.geteuid() == 0:
            for path in (directory / "in", directory / "out", directory):
                os.chown(path, NOBODY, NOBODY)
        else:  # the container user differs from ours; CHANNEL_ROOT (0700) keeps others out
            for name in ("in", "out"):
                os.chmod(directory / name, 0o666)
            os.chmod(directory, 0o755)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return directory


class DockerSandboxProcess(SandboxProcess):
    backend_name = "docker"

    def __init__(self, client, image: str, limits: SandboxLimits) -> None:
        self.client = client
        self.removed = False
        self.container = None
        self.transport = None
        self.memory_alarm_fd: int | None = None
        self.host_channel_dir = make_channel_dir()
        # The host holds the far end of both FIFOs first, so the guest's opens never block.
        # Opening `in` read-write never blocks either; writes to it are bounded in send().
        request_fd = os.open(self.host_channel_dir / "in", os.O_RDWR | os.O_CLOEXEC)
        try:
            reply_fd = os.open(self.host_channel_dir / "out",
                               os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except BaseException:
            os.close(request_fd)
            self.remove_channel_dir()
            raise
        self.fds = (request_fd, reply_fd)
        try:
            self.create(client, image, limits)
        except BaseException:
            self.kill()
            raise

    def create(self, client, image: str, limits: SandboxLimits) -> None:
        from docker.types import LogConfig, Mount, Ulimit

        # The low-level API: one request per step, where the high-level one inspects the
        # container after creating it (every request costs the engine, and the engine's time is
        # what a tournament of many short episodes waits on).
        host_config = client.api.create_host_config(
            # network_disabled (below) keeps the engine from running its network hook (a
            # re-exec of dockerd per container); the container still gets its own empty
            # network namespace, loopback only.
            network_mode="none",
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            pids_limit=limits.max_processes,
            nano_cpus=int(limits.cpus * 1e9),
            read_only=True,
            tmpfs={"/tmp": f"size={limits.tmpfs_bytes},mode=1777,nosuid,nodev"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            # No init of the engine's: pid 1 is the guest, under its own filter (it reaps).
            init=False,
            log_config=LogConfig(type=LogConfig.types.NONE),
            ipc_mode="none",  # own IPC namespace and no writable /dev/shm
            # Only the channel directory, read-only (FIFOs open for writing on a read-only mount).
            mounts=[Mount(CHANNEL_PATH, str(self.host_channel_dir), type="bind", read_only=True)],
            ulimits=[Ulimit(name="core", soft=0, hard=0), Ulimit(name="nofile", soft=256,
                                                                 hard=256)],
        )
        created = client.api.create_container(
            image,
            # The image may set PYTHON* variables of its own: the guest starts under -I.
            command=guest_command(limits, python="python3", count_processes=False,
                                  channel_dir=CHANNEL_PATH, env_pinned=False),
            stdin_open=False,
            tty=False,
            detach=True,
            network_disabled=True,
            user="65534:65534",
            environment={},
            use_config_proxy=False,
            labels={LABEL: "1", OWNER_LABEL: OWNER},
            hostname="sandbox",
            working_dir="/tmp",
            host_config=host_config,
        )
        self.container = client.containers.prepare_model({"Id": created["Id"]})
        attached = client.api.attach_socket(
            self.container.id, params={"stdout": 1, "stderr": 1, "stream": 1}
        )
        raw = getattr(attached, "_sock", attached)
        self.transport = FifoTransport(raw, *self.fds)
        self.keep_alive = attached  # closing the wrapper would close the socket
        client.api.start(self.container.id)
        self.transport.wait_ready(READY_TIMEOUT)
        # The guest holds its ends now: delete the names, so only its private fds remain.
        self.remove_channel_dir()
        self.watch_memory(limits)

    def watch_memory(self, limits: SandboxLimits) -> None:
        """When the engine is local with cgroup v1, learn at once that the container ran out of
        memory even if the guest survives (the kernel killed one of its children)."""
        if not memory_alarms_possible(self.client):
            return
        with contextlib.suppress(Exception):
            self.container.reload()
            pid = self.container.attrs.get("State", {}).get("Pid")
            alarm = process_oom_eventfd(int(pid)) if pid else None
            if alarm is not None:
                self.memory_alarm_fd, memory_dir = alarm
                self.transport.add_memory_alarm(self.memory_alarm_fd,
                                                memory_message(limits.memory_bytes),
                                                memory_dir.exists)

    def remove_channel_dir(self) -> None:
        shutil.rmtree(self.host_channel_dir, ignore_errors=True)

    def alive(self) -> bool:
        # The attach stream ends when the container does; the engine is not asked.
        return not self.removed and not self.transport.peer_closed()

    def kill(self) -> None:
        if self.removed:
            return
        self.removed = True
        if self.memory_alarm_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.memory_alarm_fd)
        if self.transport is not None:
            self.transport.close()
        else:
            for fd in self.fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.remove_channel_dir()
        if self.container is not None:
            _removals.put(self.container)

    def exit_error(self, stderr_tail: str) -> SandboxError:
        try:
            result = self.container.wait(timeout=5)
            self.container.reload()
            state = self.container.attrs.get("State", {})
        except Exception:
            return describe_exit(None, stderr_tail)
        status = result.get("StatusCode")
        if state.get("OOMKilled"):
            return SandboxMemoryExceeded("the environment ran out of memory (killed by the engine)")
        # Statuses of 128 and above mean the container's pid 1 was killed by a signal (status -
        # 128), from outside: describe_exit says so.
        return describe_exit(status, stderr_tail)


class DockerBackend(Backend):
    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        self.fixed_image = image

    @property
    def image(self) -> str:
        return self.fixed_image or configured_image()

    def unavailable_reason(self) -> str | None:
        try:
            import docker
        except ImportError:
            return "the docker Python package is not installed"
        try:
            client = docker_client()
            client.ping()
        except Exception as error:
            return f"no Docker engine answers ({error.__class__.__name__}); start dockerd"
        try:
            client.images.get(self.image)
        except docker.errors.ImageNotFound:
            return (f"the sandbox image {self.image} is missing; run "
                    "`python manage.py build_sandbox_image --offline`")
        except Exception as error:
            return f"could not inspect {self.image}: {error}"
        return None

    def start(self, limits: SandboxLimits) -> DockerSandboxProcess:
        try:
            return DockerSandboxProcess(docker_client(), self.image, limits)
        except SandboxError:
            raise
        except Exception as error:
            raise SandboxUnavailable(f"could not start a Docker sandbox: {error}") from error
