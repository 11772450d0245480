"""Docker backend: one fresh, locked-down container per sandbox, talked to over attach."""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

from sandbox_runner.backends.base import Backend, SandboxProcess, describe_exit, guest_command
from sandbox_runner.errors import SandboxError, SandboxMemoryExceeded, SandboxUnavailable
from sandbox_runner.limits import SandboxLimits, configured_image
from sandbox_runner.protocol import MultiplexedSocketTransport

logger = logging.getLogger(__name__)

LABEL = "envduels.sandbox"
OWNER_LABEL = "envduels.owner"
OWNER = f"{socket.gethostname()}:{os.getpid()}"

_client = None
_client_lock = threading.Lock()
_reaped = False
# Containers are removed off the caller's path; atexit waits for the removals to finish.
_remover = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox-remove")
atexit.register(_remover.shutdown, wait=True)


def docker_client():
    """Return one shared Docker client, reaping containers left by dead processes first."""
    global _client, _reaped
    with _client_lock:
        if _client is None:
            import docker

            # Generous: removing a container full of fork-bomb processes can take a while.
            _client = docker.from_env(timeout=120)
        if not _reaped:
            _reaped = True
            reap_stale_containers(_client)
        return _client


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


class DockerSandboxProcess(SandboxProcess):
    backend_name = "docker"

    def __init__(self, client, image: str, limits: SandboxLimits) -> None:
        from docker.types import LogConfig, Ulimit

        self.client = client
        self.removed = False
        self.container = client.containers.create(
            image,
            command=guest_command(limits, python="python3", count_processes=False),
            stdin_open=True,
            tty=False,
            detach=True,
            network_mode="none",
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            pids_limit=limits.max_processes,
            nano_cpus=int(limits.cpus * 1e9),
            read_only=True,
            tmpfs={"/tmp": f"size={limits.tmpfs_bytes},mode=1777,nosuid,nodev"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            user="65534:65534",
            init=True,
            environment={},
            use_config_proxy=False,
            log_config=LogConfig(type=LogConfig.types.NONE),
            labels={LABEL: "1", OWNER_LABEL: OWNER},
            hostname="sandbox",
            working_dir="/tmp",
            ipc_mode="none",  # own IPC namespace and no writable /dev/shm
            ulimits=[Ulimit(name="core", soft=0, hard=0), Ulimit(name="nofile", soft=256,
                                                                 hard=256)],
        )
        try:
            attached = client.api.attach_socket(
                self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            raw = getattr(attached, "_sock", attached)
            self.transport = MultiplexedSocketTransport(raw)
            self.keep_alive = attached  # closing the wrapper would close the socket
            self.container.start()
        except BaseException:
            self.kill()
            raise

    def alive(self) -> bool:
        if self.removed:
            return False
        try:
            self.container.reload()
        except Exception:
            return False
        return self.container.status == "running"

    def kill(self) -> None:
        if self.removed:
            return
        self.removed = True
        transport = getattr(self, "transport", None)
        if transport is not None:
            transport.close()
        _remover.submit(self.remove_container)

    def remove_container(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception as error:  # gone already; the start-up reaper catches any leftover
            logger.info("could not remove sandbox container: %s", error)

    def exit_error(self, stderr_tail: str) -> SandboxError:
        try:
            result = self.container.wait(timeout=5)
            self.container.reload()
            state = self.container.attrs.get("State", {})
        except Exception:
            return describe_exit(None, stderr_tail)
        status = result.get("StatusCode")
        if state.get("OOMKilled") or status == 137 and "MemoryError" in stderr_tail:
            return SandboxMemoryExceeded("the environment ran out of memory (killed by the engine)")
        # Exit statuses above 128 mean "killed by signal (status - 128)".
        return describe_exit(-(status - 128) if status and status > 128 else status, stderr_tail)


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
