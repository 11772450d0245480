"""What each hardening round changed: a version against its parent, over the field's slots.

For round n, every slot whose revision n is in the field is compared with its revision n − 1 on
three per-version figures (duels/studies/figures_versions.py): the field's unhinted pass rate
p_u and setter score s = p_h · (1 − p_u) (the peers' plays pooled, duels/scoring.py's rule),
and the peer discrimination. Each figure's before, after and change (after − before) are
domain-balanced means over the slots where it is defined in both versions. `first_to_final`
compares each slot's final version with its first the same way (a slot whose revisions all
failed validation counts with its first version final: no change). Intervals: a studentized
bootstrap over slots within each author's slots of each domain
(duels/studies/figures_resampling.py), drawn from a generator keyed by the compared pairs, so
the same comparison (one hardening round's, and first to final when there is one round) gets the
same interval wherever it is shown.
"""

from __future__ import annotations

import numpy as np

from duels.analytics.proportions import newcombe_difference
from duels.studies.figures_field import Field
from duels.studies.figures_models import balanced, score_interval
from duels.studies.figures_resampling import (
    degrees_of_freedom,
    linearised_variance,
    pair,
    solver_strata,
    stratified_counts,
    studentized_interval,
)
from duels.studies.figures_versions import VersionFigures, score_values

FIGURES = ("p_unhinted", "setter_score", "peer_discrimination")


def _score_fallback(estimate: float | None, part: str, before_plays: float, after_plays: float,
                    before: float | None, after: float | None) -> list[float] | None:
    """Where the slots show no spread to resample (every slot changed alike, or one slot):
    the score interval of the peers' pooled plays, as the per-model figures get (Wilson for a
    before or after, Newcombe for the change, placed at the figure)."""
    if estimate is None:
        return None
    if part != "change":
        plays = before_plays if part == "before" else after_plays
        return list(score_interval(estimate, float(plays))) if plays else None
    if before is None or after is None or not (before_plays and after_plays):
        return None
    low, high = newcombe_difference(after * after_plays, after_plays, before * before_plays,
                                    before_plays)
    pooled = after - before
    return [max(-1.0, min(estimate, estimate - (pooled - low))),
            min(1.0, max(estimate, estimate + (high - pooled)))]


def _compare(pairs: list[tuple[int, int]], field: Field, values: dict, *, intervals: bool,
             resamples: int, rng: np.random.Generator) -> dict:
    """Before / after / change of each figure over (parent, child) version pairs."""
    plays = values["plays"]
    parents = np.array([parent for parent, _ in pairs])
    children = np.array([child for _, child in pairs])
    weights = np.ones((1, len(pairs)))
    domain_of = [field.versions[c].domain for c in children]
    names = sorted(set(domain_of))
    domains = np.array([names.index(domain) for domain in domain_of], dtype=np.int64)
    # Slots are resampled within each author's slots of each domain, as a solver's figures:
    # the field's authors are who they are, only their environments are drawn.
    strata = solver_strata(domain_of, [field.versions[c].author for c in children])
    if intervals:
        weights = np.vstack([weights, stratified_counts(rng, strata, resamples)])
    row: dict = {"slots": len(pairs), "intervals": {}}
    for name in FIGURES:
        before, after = values[name][parents], values[name][children]
        mask = (np.isfinite(before) & np.isfinite(after))[None, :]
        freedom = degrees_of_freedom(strata, mask)
        for part, part_values, bounds in (("before", before, (0.0, 1.0)),
                                          ("after", after, (0.0, 1.0)),
                                          ("change", after - before, (-1.0, 1.0))):
            figure, _, influence = balanced(part_values[None, :], mask, domains, len(names),
                                            weights)
            key = f"{name}_{part}"
            estimate = figure[0, 0]
            row[key] = float(estimate) if np.isfinite(estimate) else None
            if intervals:
                low, high = studentized_interval(
                    figure, linearised_variance(influence, weights, strata), freedom,
                    bounds=bounds)
                row["intervals"][key] = pair(low[0], high[0]) or _score_fallback(
                    row[key], part, plays[parents][mask[0]].sum(),
                    plays[children][mask[0]].sum(), row.get(f"{name}_before"),
                    row.get(f"{name}_after"))
            else:
                row["intervals"][key] = None
        row[f"{name}_slots"] = int(mask.sum())
    return row


def hardening_rows(field: Field, by_version: VersionFigures, *, intervals: bool,
                   resamples: int, rng: np.random.Generator) -> tuple[list[dict], dict | None]:
    """One row per hardening round present in the field, and the first-to-final comparison
    (None when no slot has a revision)."""
    values = {"p_unhinted": score_values(by_version.scores, "p_unhinted"),
              "setter_score": score_values(by_version.scores, "setter_score"),
              "peer_discrimination": by_version.peer_discrimination,
              # The peers' unhinted plays of each version: the score intervals' counts.
              "plays": by_version.unhinted_attempted.astype(float)}
    position = {version.uuid: v for v, version in enumerate(field.versions)}
    base = int(rng.integers(2**62))

    def compare(pairs: list[tuple[int, int]]) -> dict:
        pairs = sorted(pairs, key=lambda parent_child: parent_child[1])
        keyed = np.random.default_rng([base, *(child for _, child in pairs)])
        return _compare(pairs, field, values, intervals=intervals, resamples=resamples,
                        rng=keyed)

    rounds: dict[int, list[tuple[int, int]]] = {}
    for child, version in enumerate(field.versions):
        parent = position.get(version.parent) if version.parent else None
        if version.revision > 0 and parent is not None:
            rounds.setdefault(version.revision, []).append((parent, child))
    rows = []
    for revision in sorted(rounds):
        row = compare(rounds[revision])
        rows.append({"revision": revision, "parent_revision": revision - 1, **row})
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for v, version in enumerate(field.versions):
        if version.revision == 0:
            first[version.slot] = v
        if version.final:
            last[version.slot] = v
    slots = sorted(set(first) & set(last))
    if not any(field.versions[last[slot]].revision > 0 for slot in slots):
        return rows, None
    overall = compare([(first[slot], last[slot]) for slot in slots])
    return rows, overall
