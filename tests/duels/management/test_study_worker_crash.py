"""A worker killed mid-study, with all its processes, as when its machine dies: a surviving
worker resumes the study from the leases, and nothing is lost or played twice.

Two built-in players, one slot each, two seeds and one hardening round: four versions of eight
field plays, enough to kill the worker while it holds a field play with stored steps."""

from __future__ import annotations

import pytest

from tests.duels.management.test_worker_crash import _manage, _stop
from tests.duels.management.test_worker_crash import _worker as worker_process
from tests.helpers.crashes import (
    crash_environment,
    episode_steps,
    freeze_mid_episode,
    kill_machine,
)
from tests.helpers.parts import need
from tests.helpers.postgres import fresh_postgres_database
from tests.helpers.tournament_checks import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PLAYERS = ["builtin-architect", "builtin-cautious"]
SEEDS = 2

PREPARE = f"""
import io, json
from django.core.management import call_command
call_command("seed_builtin", verbosity=0)
out = io.StringIO()
call_command("study", players={",".join(PLAYERS)!r}, per_author=1, seeds={SEEDS}, harden=1,
             domains="maze", concurrency=4, json=True, stdout=out, stderr=io.StringIO())
print(json.loads(out.getvalue())["study"])
"""


def _study_status(db, study: str) -> str | None:
    row = db.execute("SELECT status FROM duels_study WHERE uuid = %s", (study,)).fetchone()
    return row[0] if row[0] in {"finished", "failed", "cancelled"} else None


def assert_every_version_played_once(db, study: str) -> None:
    """Each valid version: one finished play per (solver, seed, condition), steps contiguous."""
    study_id = db.execute("SELECT id FROM duels_study WHERE uuid = %s", (study,)).fetchone()[0]
    versions = db.execute("SELECT id, benchmark_seeds FROM duels_environment "
                          "WHERE study_id = %s AND status = 'valid'", (study_id,)).fetchall()
    assert len(versions) == 4, versions  # two slots, each with its revision
    for version_id, seeds in versions:
        rows = db.execute(
            "SELECT p.name, e.seed, e.condition, e.status, count(*) FROM duels_episode e "
            "JOIN duels_player p ON p.id = e.solver_id WHERE e.environment_id = %s "
            "GROUP BY 1, 2, 3, 4", (version_id,)).fetchall()
        expected = {(name, seed, condition, "finished", 1) for name in PLAYERS for seed in seeds
                    for condition in ("unhinted", "hinted")}
        assert set(rows) == expected, rows
    gaps = db.execute(
        "SELECT e.id FROM duels_episode e LEFT JOIN duels_step s ON s.episode_id = e.id "
        "WHERE e.study_id = %s GROUP BY e.id, e.steps HAVING count(s.id) <> e.steps + 1 "
        "OR min(s.index) <> 0 OR max(s.index) <> e.steps", (study_id,)).fetchall()
    assert gaps == []
    # One environment per version; each slot finished.
    slots = db.execute("SELECT status, revision FROM duels_studyslot WHERE study_id = %s",
                       (study_id,)).fetchall()
    assert slots == [("finished", 1), ("finished", 1)]


def test_a_worker_killed_mid_study_loses_and_duplicates_nothing(tmp_path):
    from sandbox_runner import available_backends

    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    import psycopg

    with fresh_postgres_database(migrated=True) as url:
        env = crash_environment(url=url, var_dir=tmp_path, backends=backends)
        study = _manage(env, "shell", "--no-imports", "-c", PREPARE).strip().splitlines()[-1]
        log = tmp_path / "workers.log"
        victim = worker_process(env, log)
        workers = [victim]
        try:
            with psycopg.connect(url, autocommit=True) as db:
                held = wait_for(
                    lambda: freeze_mid_episode(db, victim, where="e.study_id IS NOT NULL"),
                    timeout=180, what="the victim mid-play")
                steps_before = episode_steps(db, held[0])
                workers.append(worker_process(env, log))
                kill_machine(victim)

                status = wait_for(lambda: _study_status(db, study), timeout=300,
                                  what="the study to end")
                assert status == "finished", log.read_text()[-4000:]
                assert_every_version_played_once(db, study)
                resumes = db.execute("SELECT resumes FROM duels_episode WHERE id = %s",
                                     (held[0],)).fetchone()[0]
                assert resumes >= 1
                assert episode_steps(db, held[0])[: len(steps_before)] == steps_before
        finally:
            for worker in workers:
                _stop(worker)
