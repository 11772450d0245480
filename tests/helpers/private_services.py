"""Private PostgreSQL, Redis and Docker engines a test may restart without disturbing anyone else.

PostgreSQL and Redis listen on 127.0.0.1 on a free port; the Docker engine on a unix socket. Each
keeps its data in a temporary directory and is stopped and removed afterwards. PostgreSQL runs
as the `postgres` system user (initdb refuses root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.parts import need


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port: int, *, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing answered on port {port} within {timeout:g} s")


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda path: int(path.split("/")[4]))
    return Path(found[-1]).parent if found else None


class Restartable:
    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def restart(self, *, down_seconds: float = 0.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()


@dataclass
class PrivatePostgres(Restartable):
    bin_dir: Path
    data_dir: Path
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/envduels"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(self.bin_dir / "pg_ctl"), "-D",
             str(self.data_dir), "-l", str(self.log), "-w", "-t", "60", *args,
             "-o", f"-p {self.port} -k {self.data_dir} -c listen_addresses=127.0.0.1"],
            check=True, capture_output=True, timeout=120,
        )

    def start(self) -> None:
        self._ctl("start")
        _wait_for_port(self.port)

    def stop(self) -> None:
        # Fast mode: every client connection is cut, as in a real restart.
        self._ctl("stop", "-m", "fast")


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A fresh PostgreSQL cluster with an `envduels` database, trust auth on loopback."""
    bin_dir = _postgres_bin()
    need(bin_dir is not None, "PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    need(os.geteuid() == 0 and shutil.which("runuser") is not None,
         "a private PostgreSQL needs root (to run initdb as the postgres user)")
    user = pwd.getpwnam("postgres")
    root = Path(tempfile.mkdtemp(prefix="envduels-pg-"))
    os.chown(root, user.pw_uid, user.pw_gid)
    server = PrivatePostgres(bin_dir=bin_dir, data_dir=root / "data", port=free_port(),
                             log=root / "server.log")
    subprocess.run(["runuser", "-u", "postgres", "--", str(bin_dir / "initdb"), "-D",
                    str(server.data_dir), "-A", "trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True, timeout=120)
    server.start()
    try:
        subprocess.run(["runuser", "-u", "postgres", "--", str(bin_dir / "createdb"), "-h",
                        "127.0.0.1", "-p", str(server.port), "envduels"],
                       check=True, capture_output=True, timeout=60)
        yield server
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            server._ctl("stop", "-m", "immediate")
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class PrivateRedis(Restartable):
    port: int
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_port(self.port)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@contextlib.contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    """A throwaway redis-server (no persistence: a restart loses everything, as in the worst
    case of a real one)."""
    need(shutil.which("redis-server") is not None, "redis-server is not installed")
    server = PrivateRedis(port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class PrivateDocker(Restartable):
    """A second dockerd (with its own containerd) on a private socket, data and run directories:
    stopping it stops only its own containers, as a real engine restart would.

    It runs in a network namespace of its own: an engine without a bridge deletes the host's
    `docker0` when it starts, which would break the machine's own engine for everyone else."""

    root: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.root / 'docker.sock'}"

    def client(self):
        import docker

        return docker.DockerClient(base_url=self.url, timeout=120)

    def start(self) -> None:
        with open(self.root / "dockerd.log", "ab") as log:
            self.process = subprocess.Popen(
                ["unshare", "--net", "--", "dockerd", "--host", self.url,
                 "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "run"),
                 "--pidfile", str(self.root / "docker.pid"),
                 "--bridge", "none", "--iptables=false", "--ip-masq=false"],
                stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                if self.client().ping():
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError("the private dockerd did not come up; its log:\n"
                             + (self.root / "dockerd.log").read_text()[-3000:])

    def stop(self) -> None:
        """Stop the engine as `systemctl stop docker` would: SIGTERM, its containers with it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


@contextlib.contextmanager
def private_docker(*, image: str) -> Iterator[PrivateDocker]:
    """A throwaway Docker engine holding a copy of `image` from the machine's own engine."""
    need(os.geteuid() == 0 and shutil.which("dockerd") is not None
         and shutil.which("unshare") is not None,
         "a private Docker engine needs dockerd, unshare and root")
    import docker

    try:
        source = docker.from_env(timeout=120)
        archive = b"".join(source.images.get(image).save(named=True))
    except Exception as error:
        need(False, f"the machine's Docker engine has no {image} to copy ({error})")
    # In memory where the machine has it: the copied image is unpacked into the engine's data
    # directory, and removing those thousands of files from a busy disk took longer than the test.
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    server = PrivateDocker(root=Path(tempfile.mkdtemp(prefix="envduels-dockerd-", dir=memory)))
    try:
        server.start()
        server.client().images.load(archive)
        yield server
    finally:
        server.stop()
        # The engine unmounts its layers on a clean stop; after a forced one, lazily detach them.
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for mount in sorted((m for m in mounts if m.startswith(str(server.root))), reverse=True):
            subprocess.run(["umount", "-l", mount], capture_output=True, timeout=10)
        shutil.rmtree(server.root, ignore_errors=True)
