"""The study's answer as pages show it: the headline card and the two role tables (solvers,
setters), from the stored figures; one list of columns names every figure by its role on the
study page, the panel page, the published site, the CSV/JSON tables and `analytics --json`.

Reads only: no figure is computed here (duels/studies/figures.py and headline.py compute them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from duels.words.units import hint_gain_interval_text, hint_gain_text


@dataclass(frozen=True)
class RoleColumn:
    key: str  # the figure's key in the JSON rows
    label: str  # the column's name, saying the role
    metric: str  # its glossary anchor
    tooltip: str
    difference: bool = False  # a difference of two pass rates, shown in percentage points
    ranked: bool = False


SOLVER_COLUMNS = (
    RoleColumn("canonical_autonomous_solve", "Canonical solve", "canonical_autonomous_solve",
               "The solver's primary figure: its unhinted pass rate on the other models' final "
               "versions, balanced over domains.", ranked=True),
    RoleColumn("direct_common_panel_solve", "Common-panel solve", "direct_common_panel_solve",
               "A check on the solver's order: the same over the versions every model played, "
               "its own included.", ranked=True),
    RoleColumn("hint_gain", "Gain from others' hints", "solver_hint_gain",
               "A solver's figure: how much this model's own pass rate rose with the other "
               "setters' hints. Not a measure of its hints (that is its hint authoring as a "
               "setter).", difference=True),
    RoleColumn("hint_gain_delta_vs_solver", "Gain from hints vs the new solver",
               "solver_hint_gain",
               "A solver's figure: its gain from others' hints minus that of the newest "
               "evaluated player (a panel's).", difference=True),
    RoleColumn("hint_rescue", "Rescued by hints", "hint_rescue",
               "A solver's figure: of its unhinted failures on others' versions, the share the "
               "hint turned into a pass."),
    RoleColumn("hint_harm", "Harmed by hints", "hint_harm",
               "A solver's figure: of its unhinted passes on others' versions, the share it "
               "failed with the hint."),
)
SETTER_COLUMNS = (
    RoleColumn("design", "Design", "study_design",
               "The setter's primary figure: how far apart its own final versions put its "
               "peers, balanced over domains.", ranked=True),
    RoleColumn("hint_authoring", "Hint authoring", "hint_authoring",
               "A setter's figure: how much its hints raised its peers' pass rate on its own "
               "final versions.", difference=True),
    RoleColumn("setter_score_final", "Setter score of final versions", "setter_score_final",
               "A setter's figure: the mean setter score p_h · (1 − p_u) its peers gave its "
               "final versions."),
    RoleColumn("hardening_p_unhinted_change", "Hardening: unhinted pass rate change",
               "hardening_p_unhinted_change",
               "A setter's figure: its final versions' unhinted pass rate minus its first "
               "versions', over its revised slots (negative: hardening made them harder).",
               difference=True),
)
ROLES = {"solvers": SOLVER_COLUMNS, "setters": SETTER_COLUMNS}


def role_columns() -> dict:
    """The role tables' columns as data (`analytics --json`'s `roles`)."""
    return {role: [{"key": column.key, "label": column.label, "tooltip": column.tooltip}
                   for column in columns] for role, columns in ROLES.items()}


def _value_text(value: float | None, column: RoleColumn) -> str:
    if value is None:
        return "—"
    return hint_gain_text(value) if column.difference else f"{value:.2f}"


def _interval_text(bounds: Sequence[float] | None, column: RoleColumn) -> str:
    if not bounds:
        return ""
    if column.difference:
        return hint_gain_interval_text(*bounds)
    return f"[{bounds[0]:.2f}, {bounds[1]:.2f}]"


def whole_range(bounds: Sequence[float] | None, column: RoleColumn) -> bool:
    """Whether an interval covers its figure's whole scale (it then says why)."""
    if not bounds:
        return False
    low, high = (-1.0, 1.0) if column.difference else (0.0, 1.0)
    return bounds[0] <= low + 1e-9 and bounds[1] >= high - 1e-9


def _rank_text(row: Mapping, key: str) -> tuple[str, str]:
    rank = (row.get("shared_ranks") or {}).get(key)
    span = (row.get("rank_ranges") or {}).get(key)
    if rank is None:
        return "—", ""
    return str(rank), ("" if not span else str(span[0]) if span[0] == span[1]
                       else f"{span[0]}–{span[1]}")


# A setter's figures stand on its peers' decided plays of its final versions: the unhinted ones
# (design, setter score) or both conditions' (hint authoring, each matched pair's two plays).
SETTER_PLAYS = {"design": "unhinted", "setter_score_final": "unhinted",
                "hint_authoring": "decided"}


def episodes_link(*, study_uuid: str | None, player_uuid: str | None, row: Mapping,
                  figure: str, setter_counts: Mapping[str, Mapping[str, int]] | None = None,
                  ) -> dict | None:
    """The episode list filtered to the plays a figure stands on, with their number; None
    where the list's filters cannot pick exactly those plays (`setter_counts`: what the list
    holds per author, study_setter_play_counts)."""
    if not study_uuid or not player_uuid:
        return None
    plays = (row.get("plays") or {}).get(figure)
    third = (row.get("third_party") or {})
    overall = (row.get("overall") or {})
    unhinted_others = (third.get("without_hint") or {}).get("attempted")
    both_others = unhinted_others + (third.get("with_hint") or {}).get("attempted", 0) \
        if unhinted_others is not None else None
    query = {"study": study_uuid, "solver": player_uuid}
    if figure == "canonical_autonomous_solve" and plays == unhinted_others:
        query |= {"condition": "unhinted", "final": 1, "peers": 1}
    elif figure == "direct_common_panel_solve" and plays == (overall.get("without_hint")
                                                              or {}).get("attempted"):
        query |= {"condition": "unhinted", "final": 1}
    elif figure == "hint_gain" and plays == both_others:
        query |= {"final": 1, "peers": 1}
    elif (figure in SETTER_PLAYS and plays
          and plays == ((setter_counts or {}).get(player_uuid) or {}).get(SETTER_PLAYS[figure])):
        query = {"study": study_uuid, "setter": player_uuid, "final": 1, "peers": 1,
                 "outcome": "decided"}
        if SETTER_PLAYS[figure] == "unhinted":
            query["condition"] = "unhinted"
    else:
        return None
    return {"href": "/episodes/?" + urlencode(query), "plays": plays}


def role_tables(*, models: Sequence[Mapping], study_uuid: str | None = None,
                players: Mapping[str, str] | None = None,
                setter_counts: Mapping[str, Mapping[str, int]] | None = None) -> dict:
    """{"solvers": [...], "setters": [...]}: per model, its cells of each role's columns
    (value, interval, shared rank and rank range, the whole-range note, the link to its plays).
    Solvers are ordered by the primary figure's shared rank, setters likewise (then by name)."""
    players = players or {}
    tables = {}
    for role, all_columns in ROLES.items():
        primary = all_columns[0].key
        # A column no model has (a panel's authors were not hardened; no new solver) is left
        # out; the primary figure always shows.
        columns = [column for column in all_columns if column.key == primary
                   or any(row.get(column.key) is not None for row in models)]
        rows = []
        for row in models:
            if role == "setters" and not row.get("environments_authored"):
                continue  # an evaluated player wrote nothing: no setter row
            cells = []
            for column in columns:
                value = row.get(column.key)
                bounds = (row.get("intervals") or {}).get(column.key)
                rank, span = _rank_text(row, column.key) if column.ranked else ("", "")
                plays = (row.get("plays") or {}).get(column.key)
                cells.append({
                    "column": column, "value": _value_text(value, column),
                    "interval": _interval_text(bounds, column), "rank": rank, "span": span,
                    "whole": whole_range(bounds, column) and value is not None,
                    "plays": plays,
                    "link": None if value is None else episodes_link(
                        study_uuid=study_uuid, player_uuid=players.get(row["model"]),
                        row=row, figure=column.key, setter_counts=setter_counts),
                })
            rows.append({"model": row["model"], "imported": row.get("imported"),
                         "evaluated": row.get("evaluated"), "cells": cells,
                         "order": (row.get("shared_ranks") or {}).get(primary)})
        rows.sort(key=lambda item: (item["order"] or 10**9, item["model"]))
        tables[role] = {"columns": columns, "rows": rows}
    return tables


def headline_card(*, headline: Mapping | None, models: Sequence[Mapping],
                  study_uuid: str | None = None,
                  players: Mapping[str, str] | None = None) -> dict | None:
    """The headline as the card shows it: the JSON's headline plus the best solver's link to
    its plays (a setter's figure has no such list: its plays are its peers')."""
    if not headline:
        return None
    card = dict(headline)
    best = headline.get("best_solver")
    if best:
        row = next((row for row in models if row["model"] == best["model"]), {})
        card["solver_link"] = episodes_link(study_uuid=study_uuid,
                                            player_uuid=(players or {}).get(best["model"]),
                                            row=row, figure=best["figure"])
    return card


def answer_context(*, figures: Mapping | None, study_uuid: str | None = None,
                   players: Mapping[str, str] | None = None,
                   setter_counts: Mapping[str, Mapping[str, int]] | None = None) -> dict:
    """The template context of the headline card and the role tables: `answer`,
    `role_tables`."""
    figures = figures or {}
    models = figures.get("models") or []
    card = headline_card(headline=figures.get("headline"), models=models,
                         study_uuid=study_uuid, players=players)
    if card is not None:
        card["roles"] = [("solver", card.get("best_solver")),
                         ("setter", card.get("best_setter"))]
    # While no figure can be computed the page says when they will appear, not a grid of "—".
    computable = any(row.get(column.key) is not None for row in models
                     for columns in ROLES.values() for column in columns)
    return {"answer": card,
            "role_tables": role_tables(models=models, study_uuid=study_uuid, players=players,
                                       setter_counts=setter_counts)
            if computable else {}}


def role_table_rows(*, models: Sequence[Mapping], role: str) -> list[dict]:
    """One role's table as file rows: per model, each of the role's figures under its JSON key
    with `<key>_label` naming its role's column, its interval (`<key>_low`, `<key>_high`) and,
    for a ranked figure, its shared rank and rank range."""
    rows = []
    for row in models:
        if role == "setters" and not row.get("environments_authored"):
            continue
        out: dict = {"model": row["model"], "role": role[:-1]}
        for column in ROLES[role]:
            bounds = (row.get("intervals") or {}).get(column.key) or [None, None]
            out[column.key] = row.get(column.key)
            out[f"{column.key}_label"] = column.label
            out[f"{column.key}_low"], out[f"{column.key}_high"] = bounds
            if column.ranked:
                span = (row.get("rank_ranges") or {}).get(column.key) or [None, None]
                out[f"{column.key}_shared_rank"] = (row.get("shared_ranks") or {}).get(
                    column.key)
                out[f"{column.key}_rank_best"], out[f"{column.key}_rank_worst"] = span
        rows.append(out)
    return rows
