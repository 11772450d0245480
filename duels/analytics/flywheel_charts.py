"""Plotly figures and their tables for the /flywheel/ page: one per measure, each with its CSV.

Plotly is imported where a figure is drawn, not with this module: the dashboard reads the alarms
from here, and start-up never pays for the plotting stack.
"""

from __future__ import annotations


def _lines(periods: list[str], series: dict[str, list], axis: str, **layout) -> dict:
    import plotly.graph_objects as go

    from duels.analytics.charts import figure_json as _figure

    traces = [go.Scatter(x=periods, y=values, mode="lines+markers", name=name)
              for name, values in series.items()]
    return _figure(traces, xaxis={"title": {"text": "period"}, "type": "category"},
                   yaxis={"title": {"text": axis}}, margin={"l": 60}, **layout)


def flywheel_figures(flywheel: dict) -> dict[str, dict]:
    """Figures keyed by slug (difficulty, hint-gain, diversity, novelty, setters)."""
    import plotly.graph_objects as go

    from duels.analytics.charts import figure_entry as _entry
    from duels.analytics.charts import figure_json as _figure

    rows = flywheel.get("periods") or []
    if not rows:
        return {}
    names = [row["period"] for row in rows]
    figures = {}
    bands = {"unsolved": "#b91c1c", "learnable": "#15803d", "all_solved": "#a16207"}
    figures["difficulty"] = _entry(
        "Difficulty: share of designs no run solved, some runs solved (learnable), every run "
        "solved",
        _figure([go.Bar(x=names, y=[row[band] for row in rows], name=band.replace("_", " "),
                        marker={"color": color}) for band, color in bands.items()],
                barmode="stack", xaxis={"type": "category"}, yaxis={"range": [0, 1]},
                margin={"l": 60}),
        ["period", "designs", "unsolved", "learnable", "all_solved", "difficulty_median"],
        [[row["period"], row["designs"], row["unsolved"], row["learnable"], row["all_solved"],
          row["difficulty_median"]] for row in rows])
    figures["hint-gain"] = _entry(
        "Hint gain of the period's designs (box: quartiles and median)",
        _figure([go.Box(y=row["hint_gains"], name=row["period"], boxpoints="all")
                 for row in rows], showlegend=False, yaxis={"range": [-1.05, 1.05]},
                margin={"l": 60}),
        ["period", "designs_with_gain", "hint_gain_median"],
        [[row["period"], len(row["hint_gains"]), row["hint_gain_median"]] for row in rows])
    figures["diversity"] = _entry(
        "Diversity: distinct clusters, the largest cluster, designs near an earlier period's "
        "(shares) and the compression ratio",
        _lines(names, {
            "distinct cluster share": [row["distinct_share"] for row in rows],
            "largest cluster share": [row["top_cluster_share"] for row in rows],
            "near an earlier period": [row["near_earlier"] for row in rows],
            "compression ratio": [row["compression_ratio"] for row in rows],
        }, "share · ratio"),
        ["period", "designs", "distinct_clusters", "distinct_share", "top_cluster_share",
         "near_earlier", "compression_ratio"],
        [[row["period"], row["designs"], row["distinct_clusters"], row["distinct_share"],
          row["top_cluster_share"], row["near_earlier"], row["compression_ratio"]]
         for row in rows])
    figures["novelty"] = _entry(
        "Novelty: mean of 1 − the highest similarity to any earlier design",
        _lines(names, {"novelty": [row["novelty"] for row in rows]}, "novelty",
               showlegend=False),
        ["period", "designs", "novelty"],
        [[row["period"], row["designs"], row["novelty"]] for row in rows])
    setters = flywheel.get("setters") or []
    figures["setters"] = _entry(
        "Per setter: learnable share and how often it repeats its own designs",
        _figure([go.Scatter(x=[s["learnable"] for s in setters],
                            y=[s["repeat_share"] for s in setters], mode="markers",
                            text=[f"{s['setter']} · {s['period']}" for s in setters],
                            hovertemplate="%{text}<br>learnable %{x:.2f}, repeats %{y:.2f}"
                                          "<extra></extra>")],
                xaxis={"title": {"text": "learnable share"}, "range": [-0.05, 1.05]},
                yaxis={"title": {"text": "repeat share"}, "range": [-0.05, 1.05]},
                margin={"l": 60}),
        ["period", "setter", "designs", "unsolved", "learnable", "all_solved",
         "hint_gain_median", "difficulty_median", "distinct_clusters", "repeat_share",
         "compression_ratio", "novelty"],
        [[s["period"], s["setter"], s["designs"], s["unsolved"], s["learnable"],
          s["all_solved"], s["hint_gain_median"], s["difficulty_median"],
          s["distinct_clusters"], s["repeat_share"], s["compression_ratio"], s["novelty"]]
         for s in setters])
    return figures


def flywheel_latest_alarms(flywheel: dict | None) -> list[dict]:
    """The alarms of the latest period, for the dashboard."""
    rows = (flywheel or {}).get("periods") or []
    if not rows:
        return []
    latest = rows[-1]["period"]
    return [alarm for alarm in flywheel.get("alarms") or [] if alarm["period"] == latest]
