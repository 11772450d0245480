"""The real PostgreSQL server: migrations apply, and task workers never share a task."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.postgres import fresh_postgres_database

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def manage(database_url: str, *args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=timeout,
    )


MIGRATE_CHECK_AND_COUNT = """
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
call_command("migrate", check_unapplied=True, verbosity=0)  # exits non-zero if any is left
from duels.models import Step
print(Step.objects.count())
"""


def test_migrations_apply_on_postgresql():
    """Every migration applies to an empty database (one process: each `manage.py` start-up
    costs seconds; the command is the same `migrate` either way)."""
    with fresh_postgres_database() as url:
        result = manage(url, "shell", "--no-imports", "-c", MIGRATE_CHECK_AND_COUNT)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.strip() == "0", result.stderr


def test_two_workers_claim_distinct_tasks(tmp_path):
    import psycopg

    tasks = 16
    with fresh_postgres_database(migrated=True) as url:
        enqueue = manage(
            url, "shell", "--no-imports", "-c",
            "from tests.helpers.tasks import record_claim\n"
            f"for n in range({tasks}):\n"
            f"    record_claim.enqueue(marker_dir={str(tmp_path)!r}, number=n)",
        )
        assert enqueue.returncode == 0, enqueue.stderr
        env = {**os.environ, "DATABASE_URL": url}
        workers = [
            subprocess.Popen(
                # Without the system checks, as a supervisor starts its workers.
                [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay",
                 "--interval", "0.05", "--no-reload", "--worker-id", f"worker-{n}",
                 "--skip-checks"],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            for n in range(2)
        ]
        for worker in workers:
            output, _ = worker.communicate(timeout=180)
            assert worker.returncode == 0, output
        with psycopg.connect(url) as db:
            counted = db.execute(
                "SELECT count(*), count(*) FILTER (WHERE status = 'SUCCESSFUL') "
                "FROM django_tasks_database_dbtaskresult").fetchone()
    markers = sorted(path.name for path in tmp_path.iterdir())
    numbers = sorted(int(name.split("-")[0]) for name in markers)
    assert numbers == list(range(tasks)), "every task ran exactly once"
    assert len({name.split("-")[1] for name in markers}) == 2, "both workers took tasks"
    assert counted == (tasks, tasks)
