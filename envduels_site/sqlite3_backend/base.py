"""SQLite whose writers in one process take turns on a lock of their own.

SQLite lets one writer in at a time and makes the others wait in its busy handler, which polls
the held lock with sleeps of up to 100 ms. With a dozen engine threads each committing a step
every few hundred milliseconds, most of that wait was spent asleep after the lock had come free.
Here the threads of one process queue on a `threading.Lock` per database file before they ask
SQLite for the write lock, so a turn passes to the next thread as soon as the last one commits.
Other processes (the web server, other workers) still meet SQLite's own lock and busy timeout:
correctness never rests on this lock, only the wait does.

Write transactions are the outermost `atomic` blocks (begun IMMEDIATE, see settings.py) and
writing statements run outside any block (which SQLite wraps in a transaction of their own).
"""

from __future__ import annotations

import threading
import time

from django.db.backends.sqlite3 import base

DEFAULT_WAIT_SECONDS = 30.0
# SQLite calls the progress handler every this many virtual-machine instructions (well under
# a millisecond): often enough to stop a query at its time limit, rarely enough to cost nothing.
PROGRESS_INSTRUCTIONS = 20_000
WRITE_VERBS = ("INSERT", "UPDATE", "DELETE", "REPLACE")

_turns: dict[str, threading.Lock] = {}
_turns_guard = threading.Lock()


def write_turn(name: str) -> threading.Lock:
    """The lock that the writers of this process queue on for database file `name`."""
    with _turns_guard:
        return _turns.setdefault(name, threading.Lock())


def is_write(sql: str) -> bool:
    return sql.lstrip()[:7].upper().startswith(WRITE_VERBS)


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.holds_turn = False
        self.wait_seconds = DEFAULT_WAIT_SECONDS
        self.turn = write_turn(str(self.settings_dict["NAME"]))
        # When the running query must stop (time.monotonic()), or None: set per query by
        # envduels_site.query_limits while a request is served.
        self.query_deadline: float | None = None

    def get_connection_params(self):
        # Bound when the connection opens, to the file it opens (the test runner renames the
        # database between connections): a turn is always given back to the lock it came from.
        params = super().get_connection_params()
        self.wait_seconds = float(params.get("timeout", DEFAULT_WAIT_SECONDS))
        self.turn = write_turn(str(params["database"]))
        return params

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        connection.set_progress_handler(self.past_deadline, PROGRESS_INSTRUCTIONS)
        return connection

    def past_deadline(self) -> int:
        """Nonzero (SQLite then interrupts the query) once the query's deadline has passed."""
        deadline = self.query_deadline
        return int(deadline is not None and time.monotonic() > deadline)

    def take_turn(self) -> None:
        """Wait for this process's write turn, as long as SQLite itself would wait."""
        if not self.turn.acquire(timeout=self.wait_seconds):
            raise base.Database.OperationalError("database is locked")

    def _start_transaction_under_autocommit(self):
        self.take_turn()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self.turn.release()
            raise
        self.holds_turn = True

    def give_turn_back(self) -> None:
        if self.holds_turn:
            self.holds_turn = False
            self.turn.release()

    def _commit(self):
        try:
            super()._commit()
        finally:
            self.give_turn_back()

    def _rollback(self):
        try:
            super()._rollback()
        finally:
            self.give_turn_back()

    def _close(self):
        try:
            super()._close()
        finally:
            self.give_turn_back()

    def create_cursor(self, name=None):
        return self.connection.cursor(factory=lambda db: TurnTakingCursor(db, wrapper=self))


class TurnTakingCursor(base.SQLiteCursorWrapper):
    """A writing statement outside any transaction waits for the write turn too."""

    def __init__(self, connection, *, wrapper: DatabaseWrapper) -> None:
        super().__init__(connection)
        self.wrapper = wrapper

    def execute(self, query, params=None):
        return self.in_turn(query, super().execute, query, params)

    def executemany(self, query, param_list):
        return self.in_turn(query, super().executemany, query, param_list)

    def in_turn(self, query: str, run, *args):
        if self.wrapper.in_atomic_block or not is_write(query):
            return run(*args)
        self.wrapper.take_turn()
        try:
            return run(*args)
        finally:
            self.wrapper.turn.release()
