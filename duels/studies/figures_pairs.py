"""Per (version, solver) figures of a study: the original harness's per-environment, per-model
row (successes / attempted / accuracy per condition, matched pairs, hint gain, rescue, harm)."""

from __future__ import annotations

import numpy as np

from duels.analytics.proportions import newcombe_difference, wilson_interval
from duels.studies.figures_field import Field, Tallies


def _share(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _wilson(successes: int, trials: int) -> list[float] | None:
    return list(wilson_interval(successes, trials)) if trials else None


def pair_rows(field: Field, tallies: Tallies, own: np.ndarray, *, intervals: bool) -> list[dict]:
    """One row per (version, solver) with at least one play; `self` marks an author's plays of
    its own version (counted only in the direct common-panel solve)."""
    rows = []
    t = tallies
    played = (t.unhinted_attempted + t.hinted_attempted) > 0
    cells = np.nonzero(played)
    # Plain ints once, not numpy scalars row by row (a study has thousands of rows).
    columns = zip(*(getattr(t, name)[cells].tolist() for name in (
        "unhinted_successes", "unhinted_attempted", "hinted_successes", "hinted_attempted",
        "matched_pairs", "gain_sum", "rescue_num", "rescue_den", "harm_num", "harm_den")),
        own[cells].tolist(), strict=True)
    for v, s, counts in zip(*(c.tolist() for c in cells), columns, strict=True):
        (u_succ, u_att, h_succ, h_att, pairs, gain_sum, rescue_num, rescue_den, harm_num,
         harm_den, is_own) = counts
        row = {
            "version": field.versions[v].uuid, "solver": field.models[s].name,
            "self": is_own,
            "without_hint": {"successes": u_succ, "attempted": u_att,
                             "accuracy": _share(u_succ, u_att)},
            "with_hint": {"successes": h_succ, "attempted": h_att,
                          "accuracy": _share(h_succ, h_att)},
            "matched_pairs": pairs,
            "hint_gain": _share(gain_sum, pairs),
            "hint_rescue": _share(rescue_num, rescue_den),
            "hint_harm": _share(harm_num, harm_den),
            "intervals": {},
        }
        if intervals:
            # Over the matched pairs: passed hinted = rescued + passed in both.
            passed_hinted = rescue_num + harm_den - harm_num
            row["intervals"] = {
                "without_hint": _wilson(u_succ, u_att), "with_hint": _wilson(h_succ, h_att),
                "hint_gain": list(newcombe_difference(passed_hinted, pairs, harm_den, pairs))
                if pairs else None,
                "hint_rescue": _wilson(rescue_num, rescue_den),
                "hint_harm": _wilson(harm_num, harm_den),
            }
        rows.append(row)
    return rows
