"""Checks, in plain SQL on PostgreSQL, that a tournament run by worker processes lost nothing."""

from __future__ import annotations

import time


def wait_for(condition, *, timeout: float, what: str):
    """Poll `condition` until it returns something truthy; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def tournament_status(db, tournament: str) -> str | None:
    """The tournament's status once it has ended, else None."""
    row = db.execute("SELECT status FROM duels_tournament WHERE uuid = %s",
                     (tournament,)).fetchone()
    return row[0] if row[0] in {"finished", "failed", "cancelled"} else None


def assert_nothing_lost_or_duplicated(db, tournament: str, *, attempts: int) -> None:
    """Every valid side's 2k episodes exist once and finished, each with contiguous steps."""
    valid_sides = db.execute(
        "SELECT count(*) FROM duels_duel d JOIN duels_tournament t "
        "ON d.tournament_id = t.id, LATERAL (VALUES (d.env_a_id, d.forfeit_a), "
        "(d.env_b_id, d.forfeit_b)) AS side(env, forfeit) "
        "WHERE t.uuid = %s AND side.forfeit = ''", (tournament,)).fetchone()[0]
    assert valid_sides >= 1
    statuses = dict(db.execute(
        "SELECT status, count(*) FROM duels_episode GROUP BY status").fetchall())
    assert statuses == {"finished": valid_sides * 2 * attempts}, statuses
    duplicates = db.execute(
        "SELECT count(*) FROM (SELECT duel_id, environment_id, condition, seed "
        "FROM duels_episode GROUP BY 1, 2, 3, 4 HAVING count(*) > 1) d").fetchone()[0]
    assert duplicates == 0
    gaps = db.execute(
        "SELECT e.id, e.steps, count(s.id), min(s.index), max(s.index) "
        "FROM duels_episode e LEFT JOIN duels_step s ON s.episode_id = e.id "
        "GROUP BY e.id, e.steps "
        "HAVING count(s.id) <> e.steps + 1 OR min(s.index) <> 0 "
        "OR max(s.index) <> e.steps").fetchall()
    assert gaps == []
    done, total = db.execute("SELECT duels_done, duels_total FROM duels_tournament "
                             "WHERE uuid = %s", (tournament,)).fetchone()
    assert done == total
