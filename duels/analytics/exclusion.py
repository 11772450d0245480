"""How each headline figure (and the flywheel's alarms) moves when the designs that labels call
broken or hint-leaking are left out. The figures without them come from
`analytics_input(excluding=…)`, which reads the data as if they had never been stored."""

from __future__ import annotations

from typing import Any


def _headlines(result: dict[str, Any]) -> dict[str, Any]:
    summary = result.get("summary") or {}
    figures: dict[str, Any] = {
        "designs": summary.get("designs"),
        "duels": summary.get("duels"),
        "episodes": summary.get("episodes"),
        "top rated player": (result.get("ratings") or [{}])[0].get("player"),
        "transitive share": (result.get("transitivity") or {}).get("transitive_share"),
        "Kendall τ (setters vs solvers)": (result.get("divergence") or {}).get("kendall_tau"),
        "transfer ρ": (result.get("transfer") or {}).get("spearman"),
    }
    flywheel = result.get("flywheel") or {}
    figures["flywheel alarms"] = len(flywheel.get("alarms") or [])
    figures["designs with a training value"] = sum(
        1 for row in result.get("training") or [] if row.get("value") is not None)
    for finding in result.get("findings") or []:
        figures[f"{finding['id']}: figure"] = finding.get("figure")
        figures[f"{finding['id']}: verdict"] = finding.get("verdict")
    return figures


def headline_moves(*, counted: dict[str, Any], excluding: dict[str, Any]) -> list[dict[str, Any]]:
    """Each headline figure with all designs counted and with the labelled ones left out."""
    before, after = _headlines(counted), _headlines(excluding)
    return [{"figure": name, "all": before[name], "excluding": after[name],
             "moved": before[name] != after[name]} for name in before]
