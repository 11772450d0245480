"""A fresh PostgreSQL database per test, on the server named by ENVDUELS_TEST_POSTGRES_URL.

.ci/run starts PostgreSQL and sets ENVDUELS_TEST_POSTGRES_URL to a URL whose role may create
databases (for example postgres://envduels:envduels@127.0.0.1:5432/postgres).

Applying the migrations to an empty PostgreSQL database takes a `manage.py migrate` (tens of
seconds on a loaded machine), so a test that needs the schema but is not about migrating gets a
copy of a *migrated template* instead: `CREATE DATABASE ... TEMPLATE` copies its files in well
under a second. The template is made once by a real `manage.py migrate`, named by the
migrations' digest (tests/helpers/installation.py) and kept on the server, so a change to any
migration makes a new one; templates of other digests are dropped when a new one is made. A
session-wide advisory lock lets exactly one process make it while the others wait.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tests.helpers.installation import migrations_key
from tests.helpers.parts import need

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_PREFIX = "envduels_template_"
# pg_advisory_lock key shared by every process that makes, drops or copies a template.
TEMPLATE_LOCK = 0x656E7664


def postgres_admin_url() -> str:
    return os.environ.get("ENVDUELS_TEST_POSTGRES_URL", "")


def postgres_available() -> bool:
    url = postgres_admin_url()
    if not url:
        return False
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3):
            return True
    except Exception:
        return False


def database_url(name: str) -> str:
    """The admin URL pointed at database `name`."""
    parts = urlsplit(postgres_admin_url())
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _migrate(url: str) -> None:
    with tempfile.TemporaryDirectory(prefix="envduels-migrating-") as var_dir:
        environment = {**os.environ, "DATABASE_URL": url, "ENVDUELS_VAR_DIR": var_dir}
        done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT,
                              env=environment, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"migrating the PostgreSQL template failed:\n{done.stderr[-3000:]}")


def drop_database(conn, name: str, *, attempts: int = 6) -> None:
    """Drop database `name` if it exists, ending the sessions still connected to it.

    `WITH (FORCE)` ends other sessions, but only those the role may signal: an autovacuum worker
    busy in a database a test filled belongs to no role, and a role that is not a member of
    pg_signal_backend gets "must be a member of the role whose process is being terminated".
    A plain DROP asks autovacuum workers to stop by itself and waits up to five seconds for
    them, so that is the fallback, tried a few times."""
    import psycopg

    try:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    except psycopg.errors.InsufficientPrivilege:
        pass
    for attempt in range(attempts):
        try:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            return
        except psycopg.errors.ObjectInUse:
            if attempt == attempts - 1:
                raise
            time.sleep(1.0)


def _drop(conn, name: str) -> None:
    conn.execute(f'ALTER DATABASE "{name}" IS_TEMPLATE false')
    drop_database(conn, name)


def _ensure_template(conn) -> str:
    """The migrated template's name, made on first use; call with TEMPLATE_LOCK held.

    It is migrated under a draft name and renamed only when `migrate` succeeded, so a failed or
    interrupted run leaves no half-migrated template. It takes no connections: a connection
    to a template would make every copy of it fail."""
    template = TEMPLATE_PREFIX + migrations_key()
    names = [row[0] for row in conn.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s", (TEMPLATE_PREFIX + "%",))]
    if template in names:
        return template
    for stale in names:
        _drop(conn, stale)
    draft = f"{template}_draft"
    conn.execute(f'CREATE DATABASE "{draft}"')
    try:
        _migrate(database_url(draft))
    except BaseException:
        drop_database(conn, draft)
        raise
    conn.execute(f'ALTER DATABASE "{draft}" RENAME TO "{template}"')
    conn.execute(f'ALTER DATABASE "{template}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')
    return template


@contextmanager
def fresh_postgres_database(*, migrated: bool = False) -> Iterator[str]:
    """Create a database, yield its URL, drop it afterwards.

    Empty by default; with `migrated` a copy of the migrated template (every migration applied,
    no rows but those the migrations write)."""
    need(postgres_available(), "PostgreSQL not reachable: set ENVDUELS_TEST_POSTGRES_URL")
    import psycopg

    admin_url = postgres_admin_url()
    name = f"envduels_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if migrated:
            conn.execute("SELECT pg_advisory_lock(%s)", (TEMPLATE_LOCK,))
            try:
                template = _ensure_template(conn)
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (TEMPLATE_LOCK,))
        else:
            conn.execute(f'CREATE DATABASE "{name}"')
    url = database_url(name)
    try:
        yield url
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            drop_database(conn, name)


def copy_migrated_schema(target_url: str) -> None:
    """Load a copy of the migrated template into the empty database at `target_url` on another
    server (a private one a test restarts, tests/helpers/private_services.py): `pg_dump | psql`
    takes a second or two where `migrate` takes tens of seconds."""
    need(shutil.which("pg_dump") is not None and shutil.which("psql") is not None,
         "PostgreSQL client programs (pg_dump, psql) are not installed")
    with fresh_postgres_database(migrated=True) as source:
        dump = subprocess.run(["pg_dump", "--no-owner", "--no-privileges", "--dbname", source],
                              capture_output=True, timeout=120)
    assert dump.returncode == 0, dump.stderr.decode()[-3000:]
    load = subprocess.run(["psql", "--quiet", "--set", "ON_ERROR_STOP=1", "--dbname",
                           target_url], input=dump.stdout, capture_output=True, timeout=120)
    assert load.returncode == 0, load.stderr.decode()[-3000:]


# Prepended to code run by `postgres_shell`: the test suite's view of settings (plain static
# file names, no collectstatic manifest needed).
TEST_ENVIRONMENT = (
    "from django.conf import settings\n"
    "from django.test.utils import override_settings, setup_test_environment\n"
    "setup_test_environment()\n"
    "override_settings(STORAGES={**settings.STORAGES, 'staticfiles': {'BACKEND': "
    "'django.contrib.staticfiles.storage.StaticFilesStorage'}}).enable()\n"
)


def postgres_shell(url: str, code: str, *, env: dict[str, str] | None = None,
                   timeout: int = 300) -> str:
    """Run `code` in `manage.py shell` against the database at `url` (as the test suite sees
    settings) and return what it printed; fails the test on any error. The database must
    already be migrated: `fresh_postgres_database(migrated=True)`."""
    environment = {**os.environ, "DATABASE_URL": url, **(env or {})}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", TEST_ENVIRONMENT + code],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
