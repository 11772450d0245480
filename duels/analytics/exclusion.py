"""How each headline figure (and the flywheel's alarms) moves when the designs that labels call
broken or hint-leaking are left out. The figures without them come from
`analytics_input(excluding=…)`, which reads the data as if they had never been stored.

Each row names its figure as the page shows it (a finding's figure by the finding's own label,
with its glossary key), so the card reads "share of resamples where … 0.61 → 0.72".
"""

from __future__ import annotations

from typing import Any


def _headlines(result: dict[str, Any]) -> dict[str, tuple[str | None, Any]]:
    """Figure label → (glossary key or None, value)."""
    summary = result.get("summary") or {}
    figures: dict[str, tuple[str | None, Any]] = {
        "designs": (None, summary.get("designs")),
        "duels": (None, summary.get("duels")),
        "episodes": (None, summary.get("episodes")),
        "top rated player": ("rating", (result.get("ratings") or [{}])[0].get("player")),
        "transitive share": ("transitive_share",
                             (result.get("transitivity") or {}).get("transitive_share")),
        "Kendall τ (setters vs solvers)": (
            "kendall_tau", (result.get("divergence") or {}).get("kendall_tau")),
        "transfer ρ": ("transfer_rho", (result.get("transfer") or {}).get("spearman")),
    }
    flywheel = result.get("flywheel") or {}
    figures["flywheel alarms"] = (None, len(flywheel.get("alarms") or []))
    figures["designs with a training value"] = ("training_value", sum(
        1 for row in result.get("training") or [] if row.get("value") is not None))
    for finding in result.get("findings") or []:
        figure = finding.get("figure") or {}
        label = figure.get("label") or finding["id"]
        figures[label] = (figure.get("key"), figure.get("value"))
        figures[f"verdict: {finding['claim']}"] = (None, finding.get("verdict"))
    return figures


def headline_moves(*, counted: dict[str, Any], excluding: dict[str, Any]) -> list[dict[str, Any]]:
    """Each headline figure with all designs counted and with the labelled ones left out:
    `{"figure": label, "key": glossary key or None, "all", "excluding", "moved"}`."""
    before, after = _headlines(counted), _headlines(excluding)
    rows = []
    for name, (key, value) in before.items():
        other = after.get(name, (key, None))[1]
        rows.append({"figure": name, "key": key, "all": value, "excluding": other,
                     "moved": value != other})
    return rows
