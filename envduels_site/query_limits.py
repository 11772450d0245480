"""A time limit on every database query a request makes (ENVDUELS_QUERY_TIMEOUT_MS).

SQLite: the connection's progress handler interrupts a query past its deadline
(envduels_site.sqlite3_backend). PostgreSQL: `statement_timeout`, set on the connection while it
serves requests. Either way the query fails with QueryTimeLimitExceeded, which the middleware
answers with a message asking to narrow the request instead of a 500.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from django.conf import settings
from django.db import OperationalError, connections


class QueryTimeLimitExceeded(OperationalError):
    """A query ran past ENVDUELS_QUERY_TIMEOUT_MS and was stopped."""


def _stopped_by_limit(exc: BaseException, vendor: str) -> bool:
    if vendor == "sqlite":
        return "interrupted" in str(exc)
    return type(exc.__cause__).__name__ == "QueryCanceled"


def _limited(execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
    connection = context["connection"]
    limit_ms = settings.ENVDUELS_QUERY_TIMEOUT_MS
    if connection.vendor == "sqlite":
        # Kept after the call: SQLite runs most of a query while its rows are fetched.
        connection.query_deadline = time.monotonic() + limit_ms / 1000
    elif connection.vendor == "postgresql" and getattr(connection, "query_limit_ms", 0) != limit_ms:
        context["cursor"].cursor.execute(f"SET statement_timeout = {int(limit_ms)}")
        connection.query_limit_ms = limit_ms
    try:
        return execute(sql, params, many, context)
    except OperationalError as exc:
        if _stopped_by_limit(exc, connection.vendor):
            raise QueryTimeLimitExceeded(
                f"a query ran past {limit_ms} ms (ENVDUELS_QUERY_TIMEOUT_MS)") from exc
        raise


@contextmanager
def queries_time_limited() -> Iterator[None]:
    """Every query in the block, on every database, stops after ENVDUELS_QUERY_TIMEOUT_MS."""
    with ExitStack() as stack:
        for connection in connections.all():
            stack.enter_context(connection.execute_wrapper(_limited))
        try:
            yield
        finally:
            for connection in connections.all(initialized_only=True):
                _lift(connection)


def _lift(connection: Any) -> None:
    """Take the limit off a connection the request leaves (a worker thread may reuse it)."""
    if connection.vendor == "sqlite":
        connection.query_deadline = None
    elif getattr(connection, "query_limit_ms", 0) and connection.connection is not None:
        try:
            with connection.connection.cursor() as cursor:
                cursor.execute("RESET statement_timeout")
        except Exception:  # the driver's own error: an aborted transaction, a lost server
            pass  # the setting then ends with that transaction or connection
        connection.query_limit_ms = 0
