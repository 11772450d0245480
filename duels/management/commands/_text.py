"""Human-readable command output: figures that may be unknown, and the analytics summary.

A figure that cannot be computed yet is `None` in the data; people see "—" for it, and an interval
that is unknown reads "not enough data" (docs/json-outputs.md explains every field).
"""

from __future__ import annotations

from typing import Any

from duels.words.units import hint_gain_interval_text, hint_gain_text

UNKNOWN = "—"
NO_INTERVAL = "interval: not enough data"


def figure(value: Any, spec: str = ".2f") -> str:
    """Format a number, or "—" when it is unknown (None)."""
    if value is None:
        return UNKNOWN
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if spec.endswith("d") and isinstance(value, float):
        value = round(value)
    return format(value, spec)


def interval(low: Any, high: Any, spec: str = ".2f") -> str:
    """"[low, high]", or a plain "interval: not enough data" when either end is unknown."""
    if low is None or high is None:
        return NO_INTERVAL
    return f"[{figure(low, spec)}, {figure(high, spec)}]"


def _pair(value: Any) -> tuple[Any, Any]:
    if isinstance(value, list | tuple) and len(value) == 2:
        return value[0], value[1]
    return None, None


def analytics_lines(data: dict[str, Any], *, limit: int = 10) -> list[str]:
    """Every analytics block as plain text lines, unknown figures shown as "—"."""
    summary = data.get("summary") or {}
    lines = [f"computed at {data.get('computed_at') or UNKNOWN}"]
    if summary:
        lines.append(
            f"data: {summary.get('players', 0)} players, {summary.get('duels', 0)} duels, "
            f"{summary.get('episodes', 0)} episodes, "
            f"{summary.get('transfer_results', 0)} transfer results"
        )
    if not data.get("ratings"):
        lines.append("not enough data: no finished duel yet (run a duel or a tournament, then "
                     "`manage.py analytics --refresh`)")
        # The findings still say what each claim needs.
        return lines + _finding_lines(data.get("findings") or [])

    lines.append("")
    lines.append("ratings (Bradley-Terry, 1000 = anchor, 95% bootstrap interval)")
    for row in data["ratings"]:
        lines.append(
            f"  {figure(row.get('rank'), 'd'):>3}  {row['player']:<28} "
            f"{figure(row.get('rating'), '.0f'):>6}  "
            f"{interval(row.get('low'), row.get('high'), '.0f')}"
            f"  {row.get('duels', 0)} duels"
            + ("" if row.get("rank") is not None else "  (not ranked: too few duels)")
        )
    lines.append("setters (mean setter score; hint gain)")
    for row in data.get("setters") or []:
        lines.append(
            f"  {row['player']:<28} {figure(row.get('setter_score')):>5}  "
            f"{interval(row.get('low'), row.get('high'))}  "
            f"hint gain {hint_gain_text(row.get('hint_gain'))}"
        )
    lines.append("solvers (unhinted pass rate on others' valid environments)")
    for row in data.get("solvers") or []:
        lines.append(
            f"  {row['player']:<28} {figure(row.get('pass_rate')):>5}  "
            f"{interval(row.get('low'), row.get('high'))}"
        )
    lines.extend(_blocks(data, limit=limit))
    return lines


def _blocks(data: dict[str, Any], *, limit: int) -> list[str]:
    lines: list[str] = []
    divergence = data.get("divergence") or {}
    lines.append(
        f"divergence: Kendall tau {figure(divergence.get('kendall_tau'))} "
        f"{interval(divergence.get('low'), divergence.get('high'))}, "
        f"P(top solver is not top setter) {figure(divergence.get('p_top_differs'))}"
    )
    transitivity = data.get("transitivity") or {}
    lines.append(
        f"transitivity: {figure(transitivity.get('cyclic_triads'), 'd')} cyclic triads, "
        f"zeta {figure(transitivity.get('zeta'))}, transitive share "
        f"{figure(transitivity.get('transitive_share'))}, Bradley-Terry held-out accuracy "
        f"{figure(transitivity.get('bt_accuracy'))}"
    )
    environments = data.get("environments") or []
    lines.append(f"environments: {len(environments)} (largest hint gain first)")
    ranked = sorted(environments, key=lambda row: -(row.get("hint_gain") or float("-inf")))
    for row in ranked[:limit]:
        flags = ", ".join(row.get("flags") or []) or "no flags"
        lines.append(
            f"  {row['uuid']} by {row.get('author') or UNKNOWN}: hint gain "
            f"{hint_gain_text(row.get('hint_gain'))} "
            f"{hint_gain_interval_text(row.get('low'), row.get('high')) or NO_INTERVAL} ({flags})"
        )
    convergence = data.get("convergence") or {}
    lines.append(
        f"convergence: {len(convergence.get('clusters') or [])} clusters of near-duplicate "
        f"designs across authors, p = {figure(convergence.get('p_value'), '.3f')}"
    )
    transfer = data.get("transfer")
    if transfer is None:
        lines.append("transfer: not enough data (import results with `manage.py import_transfer`)")
    else:
        lines.append(
            f"transfer: Spearman {figure(transfer.get('spearman'))} "
            f"{interval(transfer.get('low'), transfer.get('high'))}, "
            f"n = {figure(transfer.get('n'), 'd')}"
        )
    uplift = data.get("observe_uplift") or []
    if not uplift:
        lines.append("observe-mode uplift: not enough data (needs duels with and without "
                     "--observe)")
    for row in uplift:
        lines.append(
            f"observe-mode uplift {row['player']}: on {figure(row.get('on'))}, off "
            f"{figure(row.get('off'))} {interval(row.get('low'), row.get('high'))}"
        )
    if "scale" in data:
        scale = data.get("scale")
        if scale is None:
            lines.append("scale: not enough data (needs parameters_b on at least five players)")
        else:
            lines.append(
                f"scale: Spearman with setter strength {figure(scale.get('setter_spearman'))} "
                f"{interval(scale.get('low'), scale.get('high'))}, with observe uplift "
                f"{figure(scale.get('uplift_spearman'))} "
                f"{interval(scale.get('u_low'), scale.get('u_high'))}, "
                f"n = {figure(scale.get('n'), 'd')}"
            )
    lines.extend(_irt_lines(data.get("irt")) if "irt" in data else [])
    lines.extend(_finding_lines(data.get("findings") or []))
    return lines


def _finding_lines(findings: list[dict[str, Any]]) -> list[str]:
    """Each finding: its verdict and claim, then the figure with its interval and n, and what
    data would settle it while there is not enough."""
    if not findings:
        return []
    lines = ["", "findings (the study's claims checked on these duels)"]
    for finding in findings:
        shown = finding.get("figure")
        label, value = "figure", shown
        if isinstance(shown, dict):
            label, value = shown.get("label") or "figure", shown.get("value")
        bounds = finding.get("interval")
        low, high = (bounds.get("low"), bounds.get("high")) if isinstance(bounds, dict) else (
            _pair(bounds))
        verdict = finding.get("verdict") or "not enough data"
        lines.append(f"  {verdict:<16} {finding.get('claim', '')}")
        spread = interval(low, high)
        if low is None and value is not None and isinstance(bounds, dict) and bounds.get("method"):
            spread = f"no interval: {bounds['method']}"  # the figure is itself a probability
        detail = f"{label} {figure(value)} ({spread}, n = {figure(finding.get('n'), 'd')})"
        if finding.get("needs"):
            detail += f"; needs {finding['needs']}"
        lines.append(f"  {'':<16} {detail}")
    return lines


def _irt_lines(irt: dict[str, Any] | None) -> list[str]:
    if not irt:
        return ["joint model (Solve/Author ratings): not enough data"]
    # The Solve rating as defined (1000 + 173.7·θ, computed once in irt_report.to_scale), never
    # the raw θ under its name.
    lines = ["joint model: Solve rating per solver"]
    for row in irt.get("solvers") or []:
        lines.append(f"  {row['player']:<28} {figure(row.get('rating'), '.0f'):>6}  "
                     f"{interval(row.get('rating_low'), row.get('rating_high'), '.0f')}")
    for row in irt.get("solvers_too_few") or []:
        lines.append(f"  {row['player']:<28} not ranked: {row.get('reason')}")
    lines.append("joint model: Author rating per setter")
    for row in irt.get("authors") or []:
        lines.append(f"  {row['player']:<28} {figure(row.get('rating')):>6}  "
                     f"{interval(row.get('low'), row.get('high'))}")
    for row in irt.get("authors_too_few") or []:
        lines.append(f"  {row['player']:<28} not ranked: {row.get('reason')}")
    fit = irt.get("fit") or {}
    lines.append(f"joint model fit: held-out accuracy {figure(fit.get('held_out_accuracy'))} "
                 f"on {figure(fit.get('episodes'), 'd')} episodes")
    return lines


def rank(row: dict, key: str) -> str:
    """A figure's shared rank and rank range ("1, 1–3"); "—" where it has none."""
    shared = (row.get("shared_ranks") or {}).get(key)
    span = (row.get("rank_ranges") or {}).get(key)
    if shared is None:
        return UNKNOWN
    return f"{shared}, {span[0]}–{span[1]}" if span else str(shared)


def answer_lines(figures: dict[str, Any]) -> list[str]:
    """The headline's sentence (and what is missing), as the card says them."""
    headline = figures.get("headline") or {}
    if not headline.get("sentence"):
        return []
    lines = ["", f"answer: {headline['sentence']}"]
    if headline.get("missing"):
        lines.append(f"missing: {headline['missing']}")
    return lines


def study_lines(*, study, figures: dict[str, Any]) -> list[str]:
    """A study's figures as plain text: rankings with intervals, hardening, versions."""
    lines = [f"study {study.uuid}: {study.name} ({study.status})",
             f"computed at {figures.get('computed_at') or UNKNOWN}"]
    models = figures.get("models") or []
    if not models:
        return [*lines, "not enough data: no final version has been played yet"]
    lines += answer_lines(figures)
    lines.append("")
    lines.append("models (over final versions; 95% intervals; shared rank and rank range in "
                 "brackets; gain from others' hints is a solver's figure)")


    for row in models:
        bounds = row.get("intervals") or {}
        lines.append(
            f"  {row['model']:<24} canonical solve {figure(row.get('canonical_autonomous_solve'))}"
            f" {interval(*_pair(bounds.get('canonical_autonomous_solve')))}"
            f" [{rank(row, 'canonical_autonomous_solve')}]"
            f"  common-panel {figure(row.get('direct_common_panel_solve'))}"
            f" [{rank(row, 'direct_common_panel_solve')}]"
            f"  design {figure(row.get('design'))} {interval(*_pair(bounds.get('design')))}"
            f" [{rank(row, 'design')}]"
            f"  gain from others' hints {hint_gain_text(row.get('hint_gain'))}")
    change = figures.get("hardening_first_to_final")
    if change:
        bounds = change.get("intervals") or {}
        lines.append(
            f"hardening, first to final version: unhinted pass rate "
            f"{figure(change.get('p_unhinted_before'))} -> {figure(change.get('p_unhinted_after'))}"
            f", change {hint_gain_text(change.get('p_unhinted_change'))} "
            f"{hint_gain_interval_text(*_pair(bounds.get('p_unhinted_change'))) or NO_INTERVAL}"
            f" over "
            f"{figure(change.get('p_unhinted_slots'), 'd')} slots")
    environments = figures.get("environments") or []
    lines.append(f"versions: {len(environments)} valid "
                 f"({sum(1 for row in environments if row.get('final'))} final)")
    for row in environments:
        lines.append(
            f"  {row['id']:<40} {'final' if row.get('final') else '     '} "
            f"unhinted {figure(row.get('p_unhinted'))} hinted {figure(row.get('p_hinted'))} "
            f"peer discrimination {figure(row.get('peer_discrimination'))}")
    lines.append(f"head to head: {len(figures.get('head_to_head') or [])} pairs")
    return lines


def panel_lines(*, panel, figures: dict[str, Any], computed_at: str | None) -> list[str]:
    """A panel's ranking as plain text: every player with its figures and intervals."""
    lines = [f"panel {panel.uuid}: {panel.name} (manifest {panel.manifest_sha256})",
             f"hint level {figures.get('hint_level')}; computed at {computed_at or UNKNOWN}"]
    models = figures.get("models") or []
    if not models:
        return [*lines, "not enough data: nobody has played the panel yet"]
    lines += answer_lines(figures)
    lines.append("")
    lines.append("models (95% intervals; shared rank and rank range in brackets; * imported "
                 "outcomes, no transcript; gain from others' hints is a solver's figure)")
    for row in models:
        bounds = row.get("intervals") or {}
        mark = "*" if row.get("imported") else " "
        lines.append(
            f" {mark}{row['model']:<24} canonical solve "
            f"{figure(row.get('canonical_autonomous_solve'))}"
            f" {interval(*_pair(bounds.get('canonical_autonomous_solve')))}"
            f" [{rank(row, 'canonical_autonomous_solve')}]"
            f"  common-panel {figure(row.get('direct_common_panel_solve'))}"
            f" [{rank(row, 'direct_common_panel_solve')}]"
            f"  gain from others' hints {hint_gain_text(row.get('hint_gain'))}"
            f" {hint_gain_interval_text(*_pair(bounds.get('hint_gain'))) or NO_INTERVAL}"
            f"  vs {figures.get('new_solver') or 'the new solver'} "
            f"{hint_gain_text(row.get('hint_gain_delta_vs_solver'))}"
            f"  design {figure(row.get('design'))} [{rank(row, 'design')}]")
    incomplete = figures.get("incomplete") or {}
    if incomplete:
        lines.append("incomplete plays (never counted): " + ", ".join(
            f"{name} {count}" for name, count in sorted(incomplete.items())))
    return lines
