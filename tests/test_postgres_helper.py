"""The suite's own PostgreSQL helper drops a test's database even when a session it may not end
is still in it (an autovacuum worker after a test that wrote many rows)."""

from __future__ import annotations

import psycopg
import pytest

from tests.helpers.postgres import drop_database, fresh_postgres_database, postgres_admin_url


class Connection:
    """Answers like PostgreSQL would for a role outside pg_signal_backend while an autovacuum
    worker is still in the database for the first `busy` plain DROPs."""

    def __init__(self, busy: int) -> None:
        self.busy = busy
        self.statements: list[str] = []

    def execute(self, statement: str) -> None:
        self.statements.append(statement)
        if "FORCE" in statement:
            raise psycopg.errors.InsufficientPrivilege(
                "must be a member of the role whose process is being terminated")
        if self.busy:
            self.busy -= 1
            raise psycopg.errors.ObjectInUse("database is being accessed by other users")


def test_a_session_the_role_may_not_end_falls_back_to_a_plain_drop(monkeypatch):
    monkeypatch.setattr("tests.helpers.postgres.time.sleep", lambda seconds: None)
    conn = Connection(busy=2)
    drop_database(conn, "envduels_test_x")
    assert conn.statements == [
        'DROP DATABASE IF EXISTS "envduels_test_x" WITH (FORCE)',
        'DROP DATABASE IF EXISTS "envduels_test_x"',
        'DROP DATABASE IF EXISTS "envduels_test_x"',
        'DROP DATABASE IF EXISTS "envduels_test_x"',
    ]


def test_a_session_that_never_leaves_is_reported(monkeypatch):
    monkeypatch.setattr("tests.helpers.postgres.time.sleep", lambda seconds: None)
    with pytest.raises(psycopg.errors.ObjectInUse):
        drop_database(Connection(busy=99), "envduels_test_x", attempts=3)


@pytest.mark.postgres
def test_a_database_with_an_open_session_is_dropped():
    with fresh_postgres_database() as url:
        name = url.rsplit("/", 1)[1]
        lingering = psycopg.connect(url)
    try:
        with psycopg.connect(postgres_admin_url(), autocommit=True) as admin:
            left = admin.execute("SELECT count(*) FROM pg_database WHERE datname = %s",
                                 (name,)).fetchone()[0]
        assert left == 0
    finally:
        lingering.close()
