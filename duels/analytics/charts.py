"""Plotly figures (as plain JSON dicts) and the table behind each, for the analytics page.

Every figure comes with `table` = {"columns": [...], "rows": [[...]]}: the numbers it draws, shown
as a table view and offered as CSV. Long tables are cut for the chart only (FOREST_LIMIT).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import plotly.graph_objects as go
import plotly.io as pio

from duels.analytics.data import EnvironmentRecord
from duels.analytics.designs import design_label
from duels.words.units import hint_gain_interval_text, hint_gain_text

# A hint-gain axis reads in percentage points, as every hint gain does (duels.words.units).
GAIN_TICKS = {"tickvals": [-1, -0.5, 0, 0.5, 1],
              "ticktext": [hint_gain_text(value) for value in (-1, -0.5, 0, 0.5, 1)]}
FOREST_LIMIT = 60
SCATTER_LIMIT = 500
_LAYOUT = {
    "template": {},
    "margin": {"l": 140, "r": 20, "t": 40, "b": 50},
    "font": {"family": "system-ui, sans-serif", "size": 12},
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "rgba(0,0,0,0)",
}


def _figure(traces: Sequence[go.BaseTraceType], **layout) -> dict:
    figure = go.Figure(data=list(traces), layout={**_LAYOUT, **layout})
    return json.loads(pio.to_json(figure, validate=True))


def _entry(title: str, figure: dict, columns: list[str], rows: list[list],
           apart: list[dict] | None = None) -> dict:
    """A figure, its table, and the players listed apart (`{player, reason}`: not ranked)."""
    entry = {"title": title, "figure": figure, "table": {"columns": columns, "rows": rows}}
    if apart:
        entry["apart"] = apart
    return entry


# For other pages' figures (the flywheel): the same layout and table shape.
figure_json = _figure
figure_entry = _entry


def _forest(labels: list[str], values: list, lows: list, highs: list, *, name: str,
            axis_title: str, reference: float | None = None) -> list[go.BaseTraceType]:
    error = {
        "type": "data", "symmetric": False,
        "array": [h - v if h is not None and v is not None else 0 for v, h in zip(values, highs,
                                                                                    strict=True)],
        "arrayminus": [v - lo if lo is not None and v is not None else 0
                       for v, lo in zip(values, lows, strict=True)],
    }
    traces: list[go.BaseTraceType] = [go.Scatter(
        x=values, y=labels, mode="markers", name=name, error_x=error,
        marker={"size": 9}, hovertemplate="%{y}: %{x:.3f}<extra></extra>",
    )]
    if reference is not None and labels:
        traces.append(go.Scatter(x=[reference, reference], y=[labels[0], labels[-1]],
                                 mode="lines", line={"dash": "dot", "color": "#999"},
                                 name=axis_title, hoverinfo="skip", showlegend=False))
    return traces


def ratings_figure(ratings: list[dict]) -> dict:
    """Every player with an interval in the chart (the table's rank is empty below the duels
    a rank needs, as on the leaderboard); those without an interval listed apart."""
    rows = sorted((r for r in ratings if r["low"] is not None and r["high"] is not None),
                  key=lambda r: r["rating"])
    traces = _forest([r["player"] for r in rows], [r["rating"] for r in rows],
                     [r["low"] for r in rows], [r["high"] for r in rows],
                     name="rating", axis_title="1000", reference=1000.0)
    return _entry(
        "Duel ratings (Bradley–Terry, 95% bootstrap intervals)",
        _figure(traces, xaxis={"title": {"text": "rating"}}, height=120 + 28 * len(rows),
                showlegend=False),
        ["rank", "player", "rating", "low", "high", "duels"],
        [[r["rank"], r["player"], r["rating"], r["low"], r["high"], r["duels"]] for r in ratings],
        apart=[{"player": r["player"], "reason": f"too few duels for an interval ({r['duels']})"}
               for r in ratings if r["low"] is None or r["high"] is None],
    )


def head_to_head_figures(order: list[str], win_rate: list[list], duels: list[list]) -> dict:
    """Two heatmaps, rows and columns ordered by rating (strongest first)."""
    def heatmap(z: list[list], title: str, colorscale: str, *, zmax: float, text: str,
                colorbar: dict, **scale) -> dict:
        # Each cell carries its number; the colour scale is fixed (0 to zmax): given only its
        # low end, Plotly scaled to the data and a count heatmap read "2 to 3".
        trace = go.Heatmap(z=z, x=order, y=order, colorscale=colorscale, zmin=0, zmax=zmax,
                           zauto=False, texttemplate=text, colorbar=colorbar, xgap=1, ygap=1,
                           hovertemplate="%{y} vs %{x}: " + text + "<extra></extra>", **scale)
        return _figure([trace], title={"text": title}, yaxis={"autorange": "reversed"},
                       xaxis={"side": "bottom"}, height=200 + 28 * len(order))
    columns = ["player", *order]
    most = max((count for row in duels for count in row if count), default=0)
    return {
        "head-to-head-wins": _entry(
            "Head-to-head win rate (row vs column, draws count half)",
            heatmap(win_rate, "win rate of row against column", "RdBu", zmax=1.0, zmid=0.5,
                    text="%{z:.2f}", colorbar={"tickvals": [0, 0.25, 0.5, 0.75, 1],
                                                "title": {"text": "win rate"}}),
            columns, [[name, *row] for name, row in zip(order, win_rate, strict=True)],
        ),
        "head-to-head-duels": _entry(
            "Head-to-head duel count",
            heatmap(duels, "duels played", "Blues", zmax=max(most, 1), text="%{z:d}",
                    colorbar={"dtick": max(1, round(most / 5)), "tick0": 0,
                              "title": {"text": "duels"}}),
            columns, [[name, *row] for name, row in zip(order, duels, strict=True)],
        ),
    }


def _no_interval(role: str, value: float) -> str:
    return (f"{role} {value:.2f} has no interval: every resample of its duels gives that same "
            "figure (one duel, or duels that all scored alike), so its uncertainty is unknown, "
            "not zero")


def roles_figure(setters: list[dict], solvers: list[dict]) -> dict:
    """Setter score and solver pass rate side by side, each ranked on its own; a player without
    an interval in a role is in the table but listed apart from that ranking."""
    setter_rows = sorted((r for r in setters if r["low"] is not None),
                         key=lambda r: r["setter_score"])
    solver_rows = sorted((r for r in solvers if r["low"] is not None),
                         key=lambda r: r["pass_rate"])
    apart = [*({"player": r["player"], "reason": _no_interval("setter score", r["setter_score"])}
               for r in setters if r["low"] is None),
             *({"player": r["player"], "reason": _no_interval("solver pass rate", r["pass_rate"])}
               for r in solvers if r["low"] is None)]
    traces = [
        *_forest([r["player"] for r in setter_rows], [r["setter_score"] for r in setter_rows],
                 [r["low"] for r in setter_rows], [r["high"] for r in setter_rows],
                 name="setter score", axis_title="setter"),
        *_forest([r["player"] for r in solver_rows], [r["pass_rate"] for r in solver_rows],
                 [r["low"] for r in solver_rows], [r["high"] for r in solver_rows],
                 name="solver pass rate", axis_title="solver"),
    ]
    traces[1].update(xaxis="x2", yaxis="y2")
    rows_shown = max(len(setter_rows), len(solver_rows))
    figure = _figure(
        traces,
        grid={"rows": 1, "columns": 2, "pattern": "independent"},
        xaxis={"title": {"text": "setter score"}, "range": [0, 1], "domain": [0, 0.45]},
        xaxis2={"title": {"text": "unhinted pass rate on others' environments"},
                "range": [0, 1], "domain": [0.6, 1]},
        yaxis2={"anchor": "x2"},
        height=140 + 28 * rows_shown,
        showlegend=False,
        # On a narrow screen (static/js/charts.js) the two rankings stack: side by side, the
        # second one's player names run into the first.
        meta={"narrow": {
            "xaxis": {"domain": [0, 1]}, "yaxis": {"domain": [0.58, 1]},
            "xaxis2": {"domain": [0, 1], "anchor": "y2"},
            "yaxis2": {"domain": [0, 0.42], "anchor": "x2"},
            "height": 2 * (110 + 28 * rows_shown), "margin": {"l": 110},
        }},
    )
    setter_by = {r["player"]: r for r in setters}
    solver_by = {r["player"]: r for r in solvers}
    rows = []
    for name in sorted(set(setter_by) | set(solver_by)):
        setter, solver = setter_by.get(name, {}), solver_by.get(name, {})
        rows.append([name, setter.get("setter_score"), setter.get("low"), setter.get("high"),
                     setter.get("hint_gain"), solver.get("pass_rate"), solver.get("low"),
                     solver.get("high")])
    return _entry(
        "Setter vs solver strength (each ranked separately)",
        figure,
        ["player", "setter_score", "setter_low", "setter_high", "hint_gain", "pass_rate",
         "pass_low", "pass_high"],
        rows,
        apart=apart,
    )


def hint_gain_figure(environments: list[dict]) -> dict:
    shown = sorted(environments, key=lambda r: -r["episodes"])[:FOREST_LIMIT]
    shown.sort(key=lambda r: r["hint_gain"])
    labels = [design_label(title=r["title"], authors=r.get("authors") or [r["author"]],
                           content_hash=r.get("content_hash") or "") for r in shown]
    traces = _forest(labels, [r["hint_gain"] for r in shown], [r["low"] for r in shown],
                     [r["high"] for r in shown], name="hint gain", axis_title="0",
                     reference=0.0)
    # Written as everywhere else: percentage points (duels.words.units), on the axis and on hover.
    traces[0].update(
        customdata=[[hint_gain_text(r["hint_gain"]),
                     hint_gain_interval_text(r["low"], r["high"])] for r in shown],
        hovertemplate="%{y}: %{customdata[0]} %{customdata[1]}<extra></extra>")
    title = "Hint gain per design (95% Newcombe intervals)"
    if len(environments) > len(shown):
        title += f" — the {len(shown)} most-played of {len(environments)}"
    return _entry(
        title,
        _figure(traces, xaxis={"title": {"text": "hint gain p_h − p_u"}, "range": [-1.05, 1.05],
                               **GAIN_TICKS},
                # Labels name the design in full: the axis grows to fit them.
                yaxis={"automargin": True}, height=120 + 22 * len(shown), showlegend=False,
                margin={**_LAYOUT["margin"], "l": 20}),
        ["uuid", "content_hash", "title", "authors", "hint_gain", "low", "high", "p_unhinted",
         "p_hinted", "flips", "episodes", "flags"],
        [[r["uuid"], r.get("content_hash") or "", r["title"],
          ", ".join(r.get("authors") or [r["author"] or ""]), r["hint_gain"], r["low"], r["high"],
          r["p_unhinted"], r["p_hinted"], r["flips"], r["episodes"], " ".join(r["flags"])]
         for r in environments],
    )


def transfer_figure(points: list[dict]) -> dict:
    trace = go.Scatter(
        x=[p["hint_gain"] for p in points], y=[p["improvement"] for p in points],
        mode="markers", text=[f"{p['learner']} · {p['target']}" for p in points],
        customdata=[hint_gain_text(p["hint_gain"]) for p in points],
        hovertemplate="%{text}<br>hint gain %{customdata}, improvement %{y:.3f}<extra></extra>",
    )
    return _entry(
        "Transfer: learner's hint gain vs improvement after training",
        _figure([trace], xaxis={"title": {"text": "hint gain"}, **GAIN_TICKS},
                yaxis={"title": {"text": "after − before"}}, height=420, margin={"l": 70}),
        ["learner", "target", "benchmark", "hint_gain", "baseline", "improvement"],
        [[p["learner"], p["target"], p["benchmark"], p["hint_gain"], p["baseline"],
          p["improvement"]] for p in points],
    )


def observe_figure(rows: list[dict]) -> dict:
    traces = [
        go.Bar(x=[r["player"] for r in rows], y=[r["off"] for r in rows], name="observe off"),
        go.Bar(x=[r["player"] for r in rows], y=[r["on"] for r in rows], name="observe on"),
    ]
    return _entry(
        "Observe-mode uplift: mean setter score with observe on vs off",
        _figure(traces, barmode="group", yaxis={"title": {"text": "setter score"},
                                                 "range": [0, 1]}, height=380,
                margin={"l": 60}),
        ["player", "on", "off", "uplift", "low", "high", "n_on", "n_off"],
        [[r["player"], r["on"], r["off"], r["uplift"], r["low"], r["high"], r["n_on"],
          r["n_off"]] for r in rows],
    )


def solve_author_figure(ratings: list[dict], irt: dict) -> dict:
    """Duel, Solve and Author ratings per player on the one 1000-anchored scale."""
    duel = {r["player"]: r for r in ratings}
    solve = {r["player"]: r for r in irt["solvers"]}
    author = {r["player"]: r for r in irt["authors"]}
    names = sorted(set(duel) | set(solve) | set(author),
                   key=lambda name: (solve.get(name, {}).get("rating") or 0, name))
    traces = []
    for label, rows, key in (("duel rating", duel, "rating"), ("Solve rating", solve, "rating"),
                             ("Author rating", author, "rating")):
        shown = [name for name in names if name in rows]
        low_key = "rating_low" if rows is solve else "low"
        high_key = "rating_high" if rows is solve else "high"
        trace = _forest(shown, [rows[n][key] for n in shown], [rows[n][low_key] for n in shown],
                        [rows[n][high_key] for n in shown], name=label, axis_title="1000")[0]
        trace.update(showlegend=True)
        traces.append(trace)
    figure = _figure(traces, xaxis={"title": {"text": "rating (1000 = average; +400 = 10× odds)"}},
                     height=140 + 32 * len(names), legend={"orientation": "h"},
                     scattermode="group")
    rows = []
    for name in names:
        d, s, a = duel.get(name, {}), solve.get(name, {}), author.get(name, {})
        rows.append([name, d.get("rating"), d.get("low"), d.get("high"), s.get("rating"),
                     s.get("rating_low"), s.get("rating_high"), s.get("theta"), a.get("rating"),
                     a.get("low"), a.get("high"), a.get("setter_score"), a.get("environments")])
    return _entry(
        "Solve and Author ratings (joint item-response model) next to duel ratings",
        figure,
        ["player", "duel_rating", "duel_low", "duel_high", "solve_rating", "solve_low",
         "solve_high", "theta", "author_rating", "author_low", "author_high",
         "expected_setter_score", "environments"],
        rows,
        apart=[{"player": r["player"], "reason": f"{role} rating {r['reason']}"}
               for role, key in (("Solve", "solvers_too_few"), ("Author", "authors_too_few"))
               for r in irt.get(key) or ()],
    )


def difficulty_figure(environments: list[dict], designs: dict[str, EnvironmentRecord]) -> dict:
    """Difficulty b against hint effect γ: top right, hard designs whose hint works."""
    fitted = [r for r in environments if r["hint_effect"] is not None]
    shown = sorted(fitted, key=lambda r: -r["n"])[:SCATTER_LIMIT]
    missing = EnvironmentRecord("", "?", None, False, "")

    def label(uuid: str) -> str:
        design = designs.get(uuid, missing)
        return design_label(title=design.title, authors=design.authors or [design.author],
                            content_hash=design.content_hash)

    def identity(uuid: str) -> list:
        design = designs.get(uuid, missing)
        return [design.content_hash, design.title,
                ", ".join(name for name in design.authors or [design.author] if name)]

    labels = [label(r["uuid"]) for r in shown]
    trace = go.Scatter(
        x=[r["difficulty"] for r in shown], y=[r["hint_effect"] for r in shown], mode="markers",
        text=labels, marker={"size": 7, "opacity": 0.7},
        hovertemplate="%{text}<br>b %{x:.2f}, γ %{y:.2f}<extra></extra>",
    )
    title = "Design difficulty b and hint effect γ (joint item-response model)"
    if len(fitted) > len(shown):
        title += f" — the {len(shown)} most-played of {len(fitted)}"
    return _entry(
        title,
        _figure([trace], xaxis={"title": {"text": "difficulty b (logits, higher is harder)"}},
                yaxis={"title": {"text": "hint effect γ (logits)"}}, height=460,
                margin={"l": 70}),
        ["uuid", "content_hash", "title", "authors", "difficulty", "d_low", "d_high",
         "hint_effect", "h_low", "h_high", "expected_setter_score", "episodes"],
        [[r["uuid"], *identity(r["uuid"]), r["difficulty"], r["d_low"],
          r["d_high"], r["hint_effect"], r["h_low"], r["h_high"], r["field_setter_score"], r["n"]]
         for r in environments],
    )
