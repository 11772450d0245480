"""Every table of the study page as rows for a download (CSV or JSON): the same numbers the
page shows, from the stored figures (and, for the slots, the stored versions).

Nested figures are flattened for CSV: `intervals.design` becomes the columns `design_low` and
`design_high`, `without_hint.accuracy` the column `without_hint_accuracy`.
"""

from __future__ import annotations

from collections.abc import Callable

from duels.models import Study
from duels.studies.answer import role_table_rows
from duels.studies.selectors import study_slots


def _slots(study: Study, figures: dict) -> list[dict]:
    by_version = {row["uuid"]: row for row in figures.get("environments") or []}
    rows = []
    for slot in study_slots(study=study):
        valid = [version for version in slot.versions if version.is_valid]
        final = valid[-1].pk if valid else None
        for version in slot.versions:
            field = by_version.get(str(version.uuid)) or {}
            rows.append({
                "slot": slot.lineage, "domain": slot.domain, "version": version.version,
                "uuid": str(version.uuid), "title": version.title, "status": version.status,
                "final": version.pk == final, "benchmark_seeds": version.benchmark_seeds,
                "p_unhinted": field.get("p_unhinted"), "p_hinted": field.get("p_hinted"),
                "peer_discrimination": field.get("peer_discrimination"),
                "note": slot.note if version.pk == slot.versions[-1].pk else "",
            })
    return rows


def _matrix(study: Study, figures: dict) -> list[dict]:
    matrix = figures.get("matrix") or {}
    rows = []
    for author in matrix.get("authors", []):
        for solver in matrix.get("solvers", []):
            cell = matrix["cells"][author][solver]
            rows.append({"author": author, "solver": solver, "own": cell["own"],
                         "unhinted": cell["unhinted"], "hinted": cell["hinted"]})
    return rows


def _from(key: str, nested: str | None = None) -> Callable[[Study, dict], list[dict]]:
    def rows(study: Study, figures: dict) -> list[dict]:
        found = figures.get(nested) or {} if nested else figures
        return list(found.get(key) or [])
    return rows


def _joint(key: str) -> Callable[[Study, dict], list[dict]]:
    """The joint model's ranked rows, then those with too few plays (`ranked` says which)."""
    def rows(study: Study, figures: dict) -> list[dict]:
        joint = (figures.get("analytics") or {}).get("irt") or {}
        return [*(joint.get(key) or []), *(joint.get(f"{key}_too_few") or [])]
    return rows


def _role(role: str) -> Callable[[Study, dict], list[dict]]:
    def rows(study: Study, figures: dict) -> list[dict]:
        return role_table_rows(models=figures.get("models") or [], role=role)
    return rows


TABLES: dict[str, tuple[str, Callable[[Study, dict], list[dict]]]] = {
    "solvers": ("solvers: their figures, shared ranks and rank ranges", _role("solvers")),
    "setters": ("setters: their figures, shared ranks and rank ranges", _role("setters")),
    "models": ("per-model figures and ranks", _from("models")),
    "environments": ("per-version figures", _from("environments")),
    "pairs": ("per version and solver", _from("pairs")),
    "matrix": ("author × solver pass rates", _matrix),
    "head_to_head": ("head-to-head results derived from the field", _from("head_to_head")),
    "hardening": ("what each hardening round changed", _from("hardening")),
    "ratings": ("ratings from the field's head-to-head results",
                _from("ratings", nested="analytics")),
    "solve_ratings": ("the joint model's Solve ratings", _joint("solvers")),
    "author_ratings": ("the joint model's Author ratings", _joint("authors")),
    "slots": ("every slot's versions", _slots),
}


def study_table(*, study: Study, figures: dict, name: str) -> list[dict]:
    """The rows of table `name` (KeyError for a table that does not exist)."""
    return TABLES[name][1](study, figures)


def flat(row: dict, prefix: str = "") -> dict:
    """One CSV row: nested dicts joined by `_`, [low, high] pairs as `_low` / `_high`, other
    lists as `;`-separated text."""
    out: dict = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if key == "intervals" and isinstance(value, dict):
            for figure, bounds in value.items():
                low, high = bounds if isinstance(bounds, list | tuple) else (None, None)
                out[f"{prefix}{figure}_low"], out[f"{prefix}{figure}_high"] = low, high
        elif isinstance(value, dict):
            out.update(flat(value, prefix=f"{name}_"))
        elif isinstance(value, list | tuple):
            out[name] = ";".join("" if item is None else str(item) for item in value)
        else:
            out[name] = value
    return out


def table_grid(rows: list[dict]) -> dict:
    """The rows as {"columns", "rows"} for a CSV: every column any flattened row has."""
    flattened = [flat(row) for row in rows]
    columns = list(dict.fromkeys(key for row in flattened for key in row))
    return {"columns": columns, "rows": [[row.get(column) for column in columns]
                                         for row in flattened]}
