"""One line instead of a traceback when a command opens a database without EnvDuels' tables.

Running `manage.py` with another environment than `make run` (another folder's ENVDUELS_VAR_DIR,
no DATABASE_URL) opens another database, often a new empty one; the first query then fails with
"no such table". The person needs to know which database was opened and how to point the
command at the right one, not Django's stack.
"""

from __future__ import annotations

MISSING = ("no such table", "does not exist")


def missing_tables_line(error: BaseException) -> str | None:
    """The line to print for a database error caused by missing tables, else None."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    if not any(marker in first for marker in MISSING) or (
            "does not exist" in first and "relation" not in first):
        return None
    from django.conf import settings

    database = settings.DATABASES["default"]
    if "sqlite" in database["ENGINE"]:
        opened = f"the SQLite database {database['NAME']}"
    else:  # never the password: the name and the host are enough to tell them apart
        opened = (f"the database {database.get('NAME')!s} on "
                  f"{database.get('HOST') or 'localhost'}:{database.get('PORT') or 'default port'}")
    return (f"error: this command opened {opened}, which has no EnvDuels tables ({first[:120]}). "
            "Point it at the installation's database (set DATABASE_URL, or ENVDUELS_VAR_DIR to "
            "the folder holding envduels.sqlite3, as `make run` uses), or create the tables in "
            "this one with `python manage.py migrate`.")
