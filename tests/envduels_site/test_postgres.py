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


def test_migrations_apply_on_postgresql():
    with fresh_postgres_database() as url:
        result = manage(url, "migrate", "--noinput")
        assert result.returncode == 0, result.stderr
        check = manage(url, "migrate", "--check")
        assert check.returncode == 0, check.stdout + check.stderr
        probe = "from duels.models import Step; print(Step.objects.count())"
        tables = manage(url, "shell", "--no-imports", "-c", probe)
        assert tables.stdout.strip() == "0", tables.stderr


def test_two_workers_claim_distinct_tasks(tmp_path):
    tasks = 16
    with fresh_postgres_database() as url:
        assert manage(url, "migrate", "--noinput").returncode == 0
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
                [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay",
                 "--interval", "0.05", "--no-reload", "--worker-id", f"worker-{n}"],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            for n in range(2)
        ]
        for worker in workers:
            output, _ = worker.communicate(timeout=180)
            assert worker.returncode == 0, output
        counted = manage(
            url, "shell", "--no-imports", "-c",
            "from django_tasks_db.models import DBTaskResult\n"
            "rows = DBTaskResult.objects.all()\n"
            "print(rows.count(), rows.filter(status='SUCCESSFUL').count())",
        )
    markers = sorted(path.name for path in tmp_path.iterdir())
    numbers = sorted(int(name.split("-")[0]) for name in markers)
    assert numbers == list(range(tasks)), "every task ran exactly once"
    assert len({name.split("-")[1] for name in markers}) == 2, "both workers took tasks"
    assert counted.stdout.split() == [str(tasks), str(tasks)]
