"""What the step search reads and the index (duels.services.search_index) is built on: the
SQLite FTS table's name, the searched columns and PostgreSQL's document expression."""

from __future__ import annotations

FTS_TABLE = "duels_step_fts"
SEARCHED_COLUMNS = ("reply", "action", "observation", "thinking")
# The expression the PostgreSQL index is built on; the query must repeat it exactly.
PG_DOCUMENT = (
    "to_tsvector('simple', reply || ' ' || action || ' ' || observation || ' ' || thinking)"
)
