"""The panel's ranking as tables to download (CSV or JSON): the same numbers its page shows,
from the stored ranking. Versions are named by their manifest id; imported models are marked
`imported` (outcomes, no transcript)."""

from __future__ import annotations

from collections.abc import Callable

from duels.studies.answer import role_table_rows

TABLES: dict[str, str] = {
    "solvers": "solvers: their figures, shared ranks and rank ranges",
    "setters": "setters: their figures, shared ranks and rank ranges",
    "models": "every player's figures and ranks",
    "environments": "per-version figures",
    "results": "per version and player: pass rates in both conditions, hint gain",
}


def _results(figures: dict) -> list[dict]:
    ids = {row["uuid"]: row["id"] for row in figures.get("environments") or []}
    imported = {row["model"]: row.get("imported", False) for row in figures.get("models") or []}
    return [{"version": ids.get(row["version"], row["version"]), "uuid": row["version"],
             "model": row["solver"], "imported": imported.get(row["solver"], False),
             **{key: value for key, value in row.items() if key not in ("version", "solver")}}
            for row in figures.get("pairs") or []]


_ROWS: dict[str, Callable[[dict], list[dict]]] = {
    "solvers": lambda figures: role_table_rows(models=figures.get("models") or [],
                                               role="solvers"),
    "setters": lambda figures: role_table_rows(models=figures.get("models") or [],
                                               role="setters"),
    "models": lambda figures: list(figures.get("models") or []),
    "environments": lambda figures: list(figures.get("environments") or []),
    "results": _results,
}


def panel_table(*, figures: dict, name: str) -> list[dict]:
    """The rows of table `name` of one hint level's ranking (KeyError for an unknown table)."""
    return _ROWS[name](figures)


def results_by_version(figures: dict) -> list[dict]:
    """The per-version results table of the page: each version with its players' rows."""
    rows: dict[str, dict] = {}
    for row in figures.get("environments") or []:
        rows[row["uuid"]] = {**row, "players": []}
    for row in _results(figures):
        if row["uuid"] in rows:
            rows[row["uuid"]]["players"].append(row)
    return list(rows.values())
