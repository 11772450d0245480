"""Crash tests with real processes: two `manage.py worker`s on PostgreSQL, one SIGKILLed
mid-episode with all its processes (as when its machine dies); a PostgreSQL restart under a
running tournament.

One duel (two players, eight episodes) is enough: what is checked is that no episode of it is
lost, duplicated or broken, and a bigger tournament only runs more episodes the same way."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from duels.engine.worker_registry import REAPED_EXCEPTION
from sandbox_runner import available_backends
from tests.helpers.crashes import crash_environment, freeze_mid_episode, kill_machine
from tests.helpers.parts import need
from tests.helpers.postgres import copy_migrated_schema, fresh_postgres_database
from tests.helpers.private_services import private_postgres
from tests.helpers.tournament_checks import (
    assert_nothing_lost_or_duplicated,
    tournament_status,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[3]
MANAGE = str(ROOT / "manage.py")
PLAYERS = ["builtin-architect", "builtin-cautious"]  # 1 duel
ATTEMPTS = 2

# Run in one `manage.py shell` (one start-up instead of two): seed the built-in players and
# enqueue the tournament, printing its uuid.
PREPARE = f"""
import io, json
from django.core.management import call_command
call_command("seed_builtin", verbosity=0)
out = io.StringIO()
call_command("tournament", players={",".join(PLAYERS)!r}, attempts={ATTEMPTS}, concurrency=4,
             json=True, stdout=out, stderr=io.StringIO())
print(json.loads(out.getvalue())["tournament"])
"""


def _manage(env: dict, *args: str, timeout: float = 300) -> str:
    done = subprocess.run([sys.executable, MANAGE, *args], env=env, cwd=ROOT, timeout=timeout,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _worker(env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, MANAGE, "worker", "--concurrency", "1"],
        env=env, cwd=ROOT, stdout=log.open("ab"), stderr=subprocess.STDOUT,
    )


def _stop(worker: subprocess.Popen) -> None:
    """Stop a worker cleanly (SIGTERM), or kill it with its processes if it does not stop."""
    if worker.poll() is not None:
        return
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        kill_machine(worker)


def _prepare(url: str, tmp_path: Path, backends: list[str]) -> tuple[dict, str]:
    """Seed the built-in players in the migrated database at `url` and enqueue a one-duel
    tournament."""
    env = crash_environment(url=url, var_dir=tmp_path, backends=backends)
    printed = _manage(env, "shell", "--no-imports", "-c", PREPARE)
    return env, printed.strip().splitlines()[-1]


def test_a_killed_worker_loses_nothing_and_the_tournament_completes(tmp_path):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    import psycopg

    with fresh_postgres_database(migrated=True) as url:
        env, tournament = _prepare(url, tmp_path, backends)
        log = tmp_path / "workers.log"
        # The victim starts alone, so it surely holds work when it is killed.
        victim = _worker(env, log)
        workers = [victim]
        try:
            with psycopg.connect(url, autocommit=True) as db:
                # Kill the victim while one of its worker processes holds an episode that has
                # stored steps.
                held = wait_for(lambda: freeze_mid_episode(db, victim), timeout=120,
                                what="the victim mid-episode")
                steps_before = db.execute(
                    "SELECT index, uuid FROM duels_step WHERE episode_id = %s ORDER BY index",
                    (held[0],)).fetchall()
                victim_ids = [row[0] for row in db.execute(
                    "SELECT worker_id FROM duels_workerheartbeat WHERE supervisor_pid = %s",
                    (victim.pid,)).fetchall()]
                assert len(victim_ids) == 2, victim_ids  # one engine worker, one service worker
                # The survivor comes up while the victim hangs, then the victim dies.
                workers.append(_worker(env, log))
                kill_machine(victim)

                status = wait_for(lambda: tournament_status(db, tournament), timeout=180,
                                  what="the tournament to end")
                assert status == "finished", log.read_text()[-4000:]
                assert_nothing_lost_or_duplicated(db, tournament, attempts=ATTEMPTS)
                # The killed episode was resumed, and its stored steps were kept as they were.
                resumed = db.execute("SELECT resumes FROM duels_episode WHERE id = %s",
                                     (held[0],)).fetchone()[0]
                assert resumed >= 1
                steps_after = db.execute(
                    "SELECT index, uuid FROM duels_step WHERE episode_id = %s ORDER BY index",
                    (held[0],)).fetchall()
                assert steps_after[: len(steps_before)] == steps_before
                # The dead machine's task rows were reaped (none is left RUNNING) and its
                # workers are gone from the heartbeats; the survivor's are there.
                def reaped():
                    return db.execute("SELECT count(*) FROM django_tasks_database_dbtaskresult "
                                      "WHERE status = 'RUNNING' AND worker_ids ?| %s",
                                      (victim_ids,)).fetchone()[0] == 0
                wait_for(reaped, timeout=30, what="the dead worker's task rows to be reaped")
                heartbeats = [row[0] for row in db.execute(
                    "SELECT worker_id FROM duels_workerheartbeat").fetchall()]
                assert not set(victim_ids) & set(heartbeats) and len(heartbeats) == 2
                failed_rows = db.execute(
                    "SELECT count(*) FROM django_tasks_database_dbtaskresult "
                    "WHERE status = 'FAILED' AND exception_class_path <> %s", (REAPED_EXCEPTION,)
                ).fetchone()[0]
                assert failed_rows == 0
                assert db.execute("SELECT duels_total FROM duels_tournament WHERE uuid = %s",
                                  (tournament,)).fetchone()[0] == 1
        finally:
            for worker in workers:
                _stop(worker)


def test_a_postgres_restart_mid_tournament_loses_nothing(tmp_path):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    import psycopg

    with private_postgres() as server:
        copy_migrated_schema(server.url)
        env, tournament = _prepare(server.url, tmp_path, backends)
        log = tmp_path / "workers.log"
        worker = _worker(env, log)
        try:
            def mid_episode():
                with psycopg.connect(server.url, autocommit=True) as db:
                    return db.execute("SELECT count(*) FROM duels_episode WHERE status = "
                                      "'running' AND steps >= 1").fetchone()[0]

            wait_for(mid_episode, timeout=120, what="episodes in progress")
            # Every connection is cut and the database is away for a few seconds.
            server.restart(down_seconds=3)

            with psycopg.connect(server.url, autocommit=True) as db:
                status = wait_for(lambda: tournament_status(db, tournament), timeout=240,
                                  what="the tournament to end after the restart")
                assert status == "finished", log.read_text()[-4000:]
                assert_nothing_lost_or_duplicated(db, tournament, attempts=ATTEMPTS)
                failed = db.execute("SELECT count(*) FROM duels_duel WHERE status <> 'finished'"
                                    ).fetchone()[0]
                assert failed == 0
        finally:
            _stop(worker)
