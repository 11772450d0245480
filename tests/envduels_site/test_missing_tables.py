"""`manage.py` run outside the project with a database that has no tables: one line naming the
database it opened and how to point it at the right one, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.db import OperationalError, ProgrammingError

from envduels_site.missing_tables import missing_tables_line

ROOT = Path(__file__).resolve().parents[2]


def test_a_command_on_an_empty_database_says_which_and_what_to_do(tmp_path):
    var_dir = tmp_path / "elsewhere" / "var"
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environment.update(ENVDUELS_VAR_DIR=str(var_dir),
                       DJANGO_SETTINGS_MODULE="envduels_site.settings")
    result = subprocess.run([sys.executable, str(ROOT / "manage.py"), "panel", "list"],
                            cwd=tmp_path, env=environment, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert str(var_dir / "envduels.sqlite3") in lines[0]
    assert "DATABASE_URL" in lines[0] and "manage.py migrate" in lines[0]


def test_only_missing_tables_are_explained():
    assert missing_tables_line(OperationalError("no such table: duels_panel")) is not None
    assert missing_tables_line(ProgrammingError(
        'relation "duels_panel" does not exist\nLINE 1: SELECT')) is not None
    for other in (OperationalError("database is locked"),
                  ProgrammingError('column "x" does not exist'),
                  OperationalError("")):
        assert missing_tables_line(other) is None
