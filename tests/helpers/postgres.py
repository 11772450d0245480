"""A fresh PostgreSQL database per test, on the server named by ENVDUELS_TEST_POSTGRES_URL.

.ci/run starts PostgreSQL and sets ENVDUELS_TEST_POSTGRES_URL to a URL whose role may create
databases (for example postgres://envduels:envduels@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from tests.helpers.parts import need


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


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """Create an empty database, yield its URL, drop it afterwards."""
    need(postgres_available(), "PostgreSQL not reachable: set ENVDUELS_TEST_POSTGRES_URL")
    import psycopg

    admin_url = postgres_admin_url()
    name = f"envduels_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin_url)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))
    try:
        yield url
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
    """Migrate the database at `url`, run `code` in `manage.py shell` against it (as the test
    suite sees settings) and return what it printed; fails the test on any error."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    environment = {**os.environ, "DATABASE_URL": url, **(env or {})}
    shell = ["shell", "--no-imports", "-c", TEST_ENVIRONMENT + code]
    for argv in (["migrate", "--noinput"], shell):
        done = subprocess.run([sys.executable, "manage.py", *argv], cwd=root, env=environment,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
