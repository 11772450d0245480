"""Killing a worker machine mid-work in crash tests: its processes, and the moment it holds an
episode with stored steps."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(line) for line in found.stdout.split()]


def kill_machine(supervisor: subprocess.Popen) -> None:
    """SIGKILL the supervisor and every worker process it runs, leaving no chance to clean up."""
    os.kill(supervisor.pid, signal.SIGSTOP)  # it must not restart the children we kill
    time.sleep(0.2)
    for pid in children(supervisor.pid):
        os.kill(pid, signal.SIGKILL)
    os.kill(supervisor.pid, signal.SIGKILL)
    supervisor.wait()


def held_mid_episode(db, victim: subprocess.Popen, *, where: str = "TRUE"):
    """(episode id,) of a running episode with stored steps that one of the victim's worker
    processes holds (a lease owner is host:pid:random) and that matches `where`, or None."""
    owners = [f"%:{pid}:%" for pid in children(victim.pid)]
    if not owners:
        return None
    return db.execute(
        "SELECT e.id FROM duels_episode e WHERE e.status = 'running' "
        f"AND e.lease_owner LIKE ANY(%s) AND e.steps >= 1 AND {where}", (owners,),
    ).fetchone()


def freeze_mid_episode(db, victim: subprocess.Popen, *, where: str = "TRUE"):
    """Stop the victim (all its processes) while it holds an episode with stored steps; that
    episode's (id,), or None (and the victim running again) when it held none."""
    if not held_mid_episode(db, victim, where=where):
        return None
    family = [victim.pid, *children(victim.pid)]
    for pid in family:
        os.kill(pid, signal.SIGSTOP)
    # Frozen, the victim cannot finish the episode before it is killed.
    held = held_mid_episode(db, victim, where=where)
    if not held:
        for pid in family:
            os.kill(pid, signal.SIGCONT)
    return held


def crash_environment(*, url: str, var_dir, backends: list[str]) -> dict[str, str]:
    """The environment of the processes a crash test starts on the database at `url`: built-in
    players answering in 150 ms, short leases and heartbeats, no Redis, and bwrap where it works
    (its sandboxes die with their worker: a killed worker leaves nothing behind)."""
    env = {**os.environ, "DATABASE_URL": url, "ENVDUELS_BUILTIN_LATENCY_MS": "150",
           "ENVDUELS_LEASE_SECONDS": "3", "ENVDUELS_VAR_DIR": str(var_dir),
           "ENVDUELS_WORKER_HEARTBEAT_SECONDS": "1", "ENVDUELS_INFRA_BACKOFF_SECONDS": "1",
           "ENVDUELS_SANDBOX": "bwrap" if "bwrap" in backends else backends[0]}
    env.pop("REDIS_URL", None)
    return env


def episode_steps(db, episode_id: int) -> list[tuple[int, object]]:
    """An episode's stored steps as (index, uuid), in order: a resumed episode keeps them."""
    return db.execute("SELECT index, uuid FROM duels_step WHERE episode_id = %s ORDER BY index",
                      (episode_id,)).fetchall()
