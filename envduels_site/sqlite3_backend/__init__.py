"""SQLite with writers that take turns within a process (see base.py)."""
