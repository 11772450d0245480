"""The soak's processes: worker machines it may SIGKILL, Daphne, and the memory they use.

A "machine" is one `manage.py worker` supervisor with its children (engine workers and the
service worker), as one host of a multi-machine installation runs it (docs/deployment.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MANAGE = str(ROOT / "manage.py")


def process_children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(line) for line in found.stdout.split()]


def process_rss(pid: int) -> int | None:
    """Resident memory of `pid` in bytes, or None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of `pid`, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_port(port: int, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.2)
    raise RuntimeError(f"nothing answered on 127.0.0.1:{port} within {timeout:.0f} s")


@dataclass
class Machine:
    """One `manage.py worker --concurrency N` supervisor and its children."""

    name: str
    env: dict[str, str]
    log: Path
    concurrency: int = 2
    process: subprocess.Popen | None = None
    killed_pids: list[int] = field(default_factory=list)

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, MANAGE, "worker", "--concurrency", str(self.concurrency)],
                env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)

    @property
    def pids(self) -> list[int]:
        """The supervisor and its live children."""
        if self.process is None or self.process.poll() is not None:
            return []
        return [self.process.pid, *process_children(self.process.pid)]

    def kill_worker(self) -> int | None:
        """SIGKILL one worker process (the supervisor starts another in its place)."""
        children = process_children(self.process.pid) if self.process else []
        if not children:
            return None
        victim = children[0]
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
        self.killed_pids.append(victim)
        return victim

    def kill_machine(self) -> None:
        """SIGKILL the supervisor and every worker it runs, as when the host dies."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGSTOP)  # it must not restart the children we kill
        time.sleep(0.2)
        for pid in process_children(self.process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            self.killed_pids.append(pid)
        os.kill(self.process.pid, signal.SIGKILL)
        self.killed_pids.append(self.process.pid)
        self.process.wait()

    def stop(self) -> None:
        """SIGTERM (workers finish their step), or SIGKILL everything after a minute."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill_machine()


def daphne_start(*, env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """Daphne serving pages and websockets, as `manage.py serve` starts it."""
    from duels.management.commands.serve import daphne_argv

    with log.open("ab") as out:
        process = subprocess.Popen(daphne_argv(host="127.0.0.1", port=port), env=env, cwd=ROOT,
                                   stdout=out, stderr=subprocess.STDOUT)
    wait_for_port(port, timeout=120)
    return process


def process_stop(process: subprocess.Popen | None, *, timeout: float = 30) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
