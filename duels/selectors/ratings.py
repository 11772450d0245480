"""One player's ratings from the latest analytics snapshot: duel, Solve and Author."""

from __future__ import annotations

from duels.selectors.analytics_snapshots import analytics_latest_cached


def player_ratings(*, player_name: str) -> dict | None:
    """The player's duel rating (Bradley–Terry), Solve rating and Author rating rows, each None
    when the player has none yet; None before the first analytics snapshot."""
    snapshot = analytics_latest_cached()
    if snapshot is None:
        return None
    data = snapshot.data
    irt = data.get("irt") or {}

    def row_of(rows: list[dict] | None) -> dict | None:
        return next((row for row in rows or () if row["player"] == player_name), None)

    return {
        "computed_at": snapshot.computed_at,
        "duel": row_of(data.get("ratings")),
        # A player listed apart (too few episodes or environments) carries its reason.
        "solve": row_of(irt.get("solvers")) or row_of(irt.get("solvers_too_few")),
        "author": row_of(irt.get("authors")) or row_of(irt.get("authors_too_few")),
    }
