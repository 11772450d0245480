"""A worker killed midway through a panel evaluation, with all its processes, as when its machine
dies: a surviving worker resumes the evaluation from the leases, every (version, seed,
condition) is played exactly once, and the ranking that follows equals the definitions.

The hand-written envduels-v1 export (3 authors x 2 versions, single and graded hints; a seventh
version reads the clock and is stored invalid) and its result snapshot are imported; a built-in
player is evaluated with k = 2: 24 plays on PostgreSQL."""

from __future__ import annotations

import json

import pytest

from tests.duels.management.test_worker_crash import _manage, _stop
from tests.duels.management.test_worker_crash import _worker as worker_process
from tests.duels.panels.definitions import ranking
from tests.duels.panels.handmade import AUTHORS, SEEDS, env_id, outcome
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

PLAYER = "builtin-cautious"
K = 2

PREPARE = """
import io, pathlib
from django.core.management import call_command
from duels.models import Evaluation
from tests.duels.panels.handmade import write_export, write_snapshot
root = pathlib.Path({root!r})
write_export(root / "export", extra_clock=True)
write_snapshot(root / "snapshot", root / "export")
call_command("seed_builtin", verbosity=0)
call_command("import", str(root / "export"), "--name", "original", stdout=io.StringIO())
call_command("import", str(root / "snapshot"), "--panel", "original", stdout=io.StringIO())
call_command("evaluate", "--panel", "original", "--player", {player!r},
             "--seeds-per-environment", "{k}", "--concurrency", "2", "--json",
             stdout=io.StringIO(), stderr=io.StringIO())
print(Evaluation.objects.get().uuid)
"""


def _status(db, evaluation: str) -> str | None:
    row = db.execute("SELECT status FROM duels_evaluation WHERE uuid = %s",
                     (evaluation,)).fetchone()
    return row[0] if row[0] in {"finished", "failed", "cancelled"} else None


def assert_every_case_played_once(db, evaluation_id: int) -> None:
    versions = dict(db.execute(
        "SELECT en.id, pe.benchmark_seeds FROM duels_panelentry pe JOIN duels_environment en "
        "ON en.id = pe.environment_id WHERE en.status = 'valid'").fetchall())
    assert len(versions) == 6  # the clock-reading version is invalid and never played
    rows = db.execute(
        "SELECT environment_id, seed, condition, status, count(*) FROM duels_episode "
        "WHERE evaluation_id = %s GROUP BY 1, 2, 3, 4", (evaluation_id,)).fetchall()
    expected = {(version, seed, condition, "finished", 1) for version, seeds in versions.items()
                for seed in seeds[:K] for condition in ("unhinted", "hinted")}
    assert set(rows) == expected, rows
    gaps = db.execute(
        "SELECT e.id FROM duels_episode e LEFT JOIN duels_step s ON s.episode_id = e.id "
        "WHERE e.evaluation_id = %s GROUP BY e.id, e.steps HAVING count(s.id) <> e.steps + 1 "
        "OR min(s.index) <> 0 OR max(s.index) <> e.steps", (evaluation_id,)).fetchall()
    assert gaps == []


def expected_ranking(db, evaluation_id: int) -> dict:
    entries = db.execute(
        "SELECT pe.entry_id, pe.author, pe.domain, pe.environment_id FROM duels_panelentry pe "
        "JOIN duels_environment en ON en.id = pe.environment_id WHERE en.status = 'valid'"
    ).fetchall()
    versions = {entry_id: (author, domain) for entry_id, author, domain, _ in entries}
    by_environment = {environment_id: entry_id for entry_id, _, _, environment_id in entries}
    plays = [(env_id(number), AUTHORS[model], seed, hinted, status == "success")
             for number in range(1, 7) for model in range(3) for seed in SEEDS
             for hinted in (False, True)
             for status in [outcome(model, number, seed, hinted)]
             if status in ("success", "failure")]
    for environment_id, seed, condition, success in db.execute(
            "SELECT environment_id, seed, condition, success FROM duels_episode "
            "WHERE evaluation_id = %s", (evaluation_id,)).fetchall():
        plays.append((by_environment[environment_id], PLAYER, seed, condition == "hinted",
                      bool(success)))
    return ranking(plays=plays, versions=versions, models=[*AUTHORS, PLAYER],
                   evaluated={PLAYER}, new_solver=PLAYER)


def test_a_worker_killed_mid_evaluation_plays_each_case_once_and_ranks_it(tmp_path):
    from sandbox_runner import available_backends

    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    import psycopg

    with fresh_postgres_database(migrated=True) as url:
        env = crash_environment(url=url, var_dir=tmp_path, backends=backends)
        script = PREPARE.format(root=str(tmp_path / "files"), player=PLAYER, k=K)
        evaluation = _manage(env, "shell", "--no-imports", "-c", script).strip().splitlines()[-1]
        log = tmp_path / "workers.log"
        victim = worker_process(env, log)
        workers = [victim]
        try:
            with psycopg.connect(url, autocommit=True) as db:
                held = wait_for(
                    lambda: freeze_mid_episode(db, victim, where="e.evaluation_id IS NOT NULL"),
                    timeout=180, what="the victim mid-play")
                steps_before = episode_steps(db, held[0])
                workers.append(worker_process(env, log))
                kill_machine(victim)

                status = wait_for(lambda: _status(db, evaluation), timeout=300,
                                  what="the evaluation to end")
                assert status == "finished", log.read_text()[-4000:]
                evaluation_id = db.execute("SELECT id FROM duels_evaluation WHERE uuid = %s",
                                           (evaluation,)).fetchone()[0]
                assert_every_case_played_once(db, evaluation_id)
                resumes = db.execute("SELECT resumes FROM duels_episode WHERE id = %s",
                                     (held[0],)).fetchone()[0]
                assert resumes >= 1
                assert episode_steps(db, held[0])[: len(steps_before)] == steps_before

                printed = json.loads(_manage(env, "analytics", "--panel", "original", "--json"))
                rows = {row["model"]: row for row in printed["models"]}
                for model, figures in expected_ranking(db, evaluation_id).items():
                    for name, value in figures.items():
                        assert rows[model][name] == pytest.approx(value, abs=1e-9), (model,
                                                                                     name)
                again = json.loads(_manage(env, "evaluate", "--panel", "original", "--player",
                                           PLAYER, "--seeds-per-environment", str(K),
                                           "--dry-run", "--json"))
                assert again == {"panel": again["panel"], "player": PLAYER, "played": 24,
                                 "remaining": 0, "incomplete": 0}
        finally:
            for worker in workers:
                _stop(worker)
