"""A migrated SQLite database, made once and copied wherever a test needs a fresh installation.

Applying the migrations costs seconds, and every pytest-xdist worker's test database and every
separate installation a test starts (`manage.py` in a temporary ENVDUELS_VAR_DIR) would pay it
again. The template is made by a real `manage.py migrate` and kept under the system's temporary
directory, keyed by the contents of the migrations and the versions of the packages that bring
their own, so a change to any migration makes a new one; a file lock lets exactly one process
make it while the others wait. Copies use SQLite's backup API, so none is half-written.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIGRATING_PACKAGES = ("Django", "django-tasks", "django-tasks-db")


def migrations_key() -> str:
    """A short digest of the migrations and the packages that bring their own: a change to any
    of them names a new template (here, and for PostgreSQL in tests/helpers/postgres.py)."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "duels" / "migrations").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for package in MIGRATING_PACKAGES:
        digest.update(f"{package}=={metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


def migrated_template() -> Path:
    """The path of a migrated SQLite database for the current migrations (made on first use)."""
    folder = Path(tempfile.gettempdir()) / "envduels-test-templates" / migrations_key()
    folder.mkdir(parents=True, exist_ok=True)
    template = folder / "envduels.sqlite3"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            work = Path(tempfile.mkdtemp(prefix="migrating-", dir=folder))
            env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
            env["ENVDUELS_VAR_DIR"] = str(work)
            done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"],
                                  cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"migrating the template database failed:\n{done.stderr}")
            copy_database(source=work / "envduels.sqlite3", target=template)
    return template


def copy_database(*, source: Path, target: Path) -> None:
    """Copy a SQLite database consistently (WAL included) to `target`, replacing it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    draft = target.with_name(f".{target.name}.{os.getpid()}")
    with sqlite3.connect(source) as origin, sqlite3.connect(draft) as copy:
        origin.backup(copy)
    copy.close()
    origin.close()
    for leftover in ("-wal", "-shm"):  # a stale log would be replayed into the copy
        Path(f"{target}{leftover}").unlink(missing_ok=True)
    os.replace(draft, target)


def migrated_installation(var_dir: Path) -> Path:
    """Give ENVDUELS_VAR_DIR `var_dir` a migrated, empty database, as `migrate` would."""
    database = var_dir / "envduels.sqlite3"
    copy_database(source=migrated_template(), target=database)
    return database
