"""The database's own full-text index over step texts (reply, action, observation, thinking).

PostgreSQL: a GIN index on the `to_tsvector('simple', …)` expression the search query repeats.
SQLite: an FTS5 table whose content is `duels_step`, kept in step with it by triggers.

SQLite drops a table's triggers when a migration rebuilds the table (as it does to add most
columns), so `step_search_index_install` also runs after every `migrate`: it puts back what is
missing and rebuilds the FTS table from the steps when its triggers were gone.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from duels.selectors.search_columns import FTS_TABLE, PG_DOCUMENT, SEARCHED_COLUMNS

PG_INDEX = "duels_step_search"

_COLUMNS = ", ".join(SEARCHED_COLUMNS)
_NEW = ", ".join(f"new.{column}" for column in SEARCHED_COLUMNS)
_OLD = ", ".join(f"old.{column}" for column in SEARCHED_COLUMNS)
_SQLITE_TRIGGERS = {
    f"{FTS_TABLE}_ai": f"""CREATE TRIGGER {FTS_TABLE}_ai AFTER INSERT ON duels_step BEGIN
        INSERT INTO {FTS_TABLE}(rowid, {_COLUMNS}) VALUES (new.id, {_NEW}); END""",
    f"{FTS_TABLE}_ad": f"""CREATE TRIGGER {FTS_TABLE}_ad AFTER DELETE ON duels_step BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {_COLUMNS}) VALUES ('delete', old.id, {_OLD});
        END""",
    f"{FTS_TABLE}_au": f"""CREATE TRIGGER {FTS_TABLE}_au AFTER UPDATE ON duels_step BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {_COLUMNS}) VALUES ('delete', old.id, {_OLD});
        INSERT INTO {FTS_TABLE}(rowid, {_COLUMNS}) VALUES (new.id, {_NEW}); END""",
}


def step_search_index_install(*, connection: BaseDatabaseWrapper) -> bool:
    """Create whatever part of the step index is missing; True when anything was created."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS {PG_INDEX} ON duels_step USING GIN "
                f"(({PG_DOCUMENT}))"
            )
            return False
        if connection.vendor != "sqlite":
            return False
        cursor.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")
        present = {row[0] for row in cursor.fetchall()}
        if "duels_step" not in present:
            return False
        missing = [name for name in _SQLITE_TRIGGERS if name not in present]
        if FTS_TABLE in present and not missing:
            return False
        if FTS_TABLE not in present:
            cursor.execute(
                f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5({_COLUMNS}, "
                f"content='duels_step', content_rowid='id', tokenize='unicode61')"
            )
        # All three together: a half set would let an update delete text never indexed.
        for name, create in _SQLITE_TRIGGERS.items():
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
            cursor.execute(create)
        # Steps written while the triggers were gone are not in the index: rebuild it whole.
        cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
        return True


def step_search_index_remove(*, connection: BaseDatabaseWrapper) -> None:
    """Drop the step index (the migration's way back)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"DROP INDEX IF EXISTS {PG_INDEX}")
        elif connection.vendor == "sqlite":
            for name in _SQLITE_TRIGGERS:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
            cursor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")
