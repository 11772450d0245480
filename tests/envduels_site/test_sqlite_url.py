"""A SQLite database named by DATABASE_URL gets the same settings as the default one."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_runner import available_backends
from tests.helpers.installation import migrated_installation
from tests.helpers.parts import need

ROOT = Path(__file__).resolve().parents[2]
MANAGE = str(ROOT / "manage.py")


def _manage(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, MANAGE, *args], env=env, cwd=ROOT, timeout=300,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_an_in_memory_sqlite_url_is_refused_with_the_reason():
    done = subprocess.run(
        [sys.executable, "-c", "import envduels_site.settings"],
        env={**os.environ, "DATABASE_URL": "sqlite://"}, capture_output=True, text=True,
        timeout=60, cwd=ROOT,
    )
    assert done.returncode != 0
    assert "in-memory SQLite" in done.stderr


# One `manage.py shell` instead of three start-ups: migrate through the URL (nothing is left
# to apply), seed the built-in players, then a duel whose episodes run in several threads, all
# writing to the one file.
MIGRATE_SEED_AND_DUEL = """
import io
from django.core.management import call_command
out = io.StringIO()
call_command("migrate", interactive=False, stdout=out)
print("no migrations to apply" if "No migrations to apply" in out.getvalue() else out.getvalue())
call_command("seed_builtin", stdout=io.StringIO())
out = io.StringIO()
call_command("duel", "builtin-architect", "builtin-rookie", attempts=2, json=True, stdout=out,
             stderr=io.StringIO())
print(out.getvalue().replace(chr(10), " "))
"""


@pytest.mark.slow
def test_a_duel_runs_to_the_end_on_a_sqlite_url_in_wal_mode(tmp_path):
    backends = available_backends()
    need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
    database = tmp_path / "elsewhere" / "duels.sqlite3"
    database.parent.mkdir()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "",
           "ENVDUELS_VAR_DIR": str(tmp_path / "var"),
           "ENVDUELS_SANDBOX": "bwrap" if "bwrap" in backends else backends[0]}
    migrated_installation(database.parent)  # writes envduels.sqlite3 there
    (database.parent / "envduels.sqlite3").rename(database)
    printed = _manage(env, "shell", "--no-imports", "-c", MIGRATE_SEED_AND_DUEL)
    applied, result = printed.strip().splitlines()[-2:]
    assert applied == "no migrations to apply"  # the URL names the migrated file
    assert json.loads(result)["outcome"] in {"a", "b", "draw"}
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        statuses = dict(db.execute("SELECT status, count(*) FROM duels_episode GROUP BY status"))
        assert db.execute("SELECT status FROM duels_duel").fetchall() == [("finished",)]
    assert set(statuses) == {"finished"} and sum(statuses.values()) >= 4
