"""The study's answer in one glance: the best solver and the best setter by their role's primary
figure, how sure the order is, whether they are different models, and one sentence made of
those same numbers (docs/results.md, "The study's answer").

Pure: the per-model rows of duels/studies/figures.py and the resampled values their intervals
came from. Primary figures: canonical solve ranks solvers, design ranks setters; the other
figures stand beside them as checks (`headline_checks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from duels.studies.figures_ranks import comparable

RANKED = ("canonical_autonomous_solve", "direct_common_panel_solve", "design")
PRIMARY = {"solver": "canonical_autonomous_solve", "setter": "design"}
LABELS = {"canonical_autonomous_solve": "canonical solve",
          "direct_common_panel_solve": "common-panel solve", "design": "design"}


def _best(rows: Sequence[Mapping], figure: str) -> dict | None:
    """The leader of `figure` (shared rank 1; ties name the first by name and list the rest)."""
    leaders = sorted((row for row in rows if (row.get("shared_ranks") or {}).get(figure) == 1),
                     key=lambda row: row["model"])
    if not leaders:
        return None
    row = leaders[0]
    return {"model": row["model"], "figure": figure, "value": row[figure],
            "interval": (row.get("intervals") or {}).get(figure),
            "rank_range": (row.get("rank_ranges") or {}).get(figure),
            "tied_with": [other["model"] for other in leaders[1:]],
            "ranked": sum(other.get(figure) is not None for other in rows)}


def resample_leaders(values: Sequence[float]) -> set[int]:
    """The models with the highest finite value of one resample (empty when none has one)."""
    finite = [(comparable(float(value)), m) for m, value in enumerate(values)
              if np.isfinite(value)]
    if not finite:
        return set()
    top = max(value for value, _ in finite)
    return {m for value, m in finite if value == top}


def different_share(solver_draws: np.ndarray, setter_draws: np.ndarray) -> float | None:
    """The share of resamples in which no model leads both figures (resample r of the solver
    figure beside resample r of the setter figure); None without a resample where both lead."""
    different = counted = 0
    for solver_values, setter_values in zip(solver_draws, setter_draws, strict=True):
        solvers, setters = resample_leaders(solver_values), resample_leaders(setter_values)
        if solvers and setters:
            counted += 1
            different += not (solvers & setters)
    return different / counted if counted else None


def _decide(best: dict | None, rows: Sequence[Mapping], role: str, plays: int) -> str | None:
    """What would settle an unsettled first place: the plays that would make the leader's and
    the runner-up's intervals part (widths shrink as 1/√plays)."""
    if best is None or best["rank_range"] is None or best["rank_range"][1] == 1:
        return None
    figure = best["figure"]
    if best["tied_with"]:
        names = [best["model"], *best["tied_with"]]
        return (f"{', '.join(names[:-1])} and {names[-1]} have the same "
                f"{LABELS[figure]} on these plays: more plays decide between them only if they "
                "truly differ.")
    others = sorted((row for row in rows if row["model"] != best["model"]
                     and row.get(figure) is not None), key=lambda row: -row[figure])
    runner = others[0]
    gap = best["value"] - runner[figure]
    first, second = best["interval"], (runner.get("intervals") or {}).get(figure)
    if not first or not second or gap <= 0:
        return None
    # The two intervals part when the half-widths' sum falls below the gap.
    widths = (best["value"] - first[0]) + (second[1] - runner[figure])
    factor = max((widths / gap) ** 2, 1.0)
    return (f"The best {role}'s first place is not settled: {best['model']} leads "
            f"{runner['model']} by {gap:.2f} in {LABELS[figure]}; about {factor:.1f} times the "
            f"plays (some {round(plays * (factor - 1)):,} more) would part their intervals if "
            "the gap holds.")


def _phrase(best: dict, role: str) -> str:
    low, high = best["interval"] or (None, None)
    interval = f" [{low:.2f}, {high:.2f}]" if low is not None else ""
    first, last = best["rank_range"] or (1, 1)
    rank = f"rank {first}" if first == last else f"rank {first}–{last}"
    verb = "solves" if role == "solver" else "sets"
    ties = f" (tied with {', '.join(best['tied_with'])})" if best["tied_with"] else ""
    return (f"{best['model']}{ties} {verb} best by {LABELS[best['figure']]}, "
            f"{best['value']:.2f}{interval}, {rank} of {best['ranked']}")


def headline_sentence(*, best_solver: dict | None, best_setter: dict | None,
                      share: float | None) -> str:
    """The one sentence a researcher would quote, from the headline's own numbers."""
    parts = [_phrase(best, role) for best, role in ((best_solver, "solver"),
                                                     (best_setter, "setter")) if best]
    if not parts:
        return "No figure can be computed yet: no final version has been played."
    sentence = "; ".join(parts)
    if share is not None:
        sentence += (f"; the best solver and the best setter are different models in "
                     f"{share:.0%} of resamples")
    return sentence + "."


def headline_compute(*, rows: Sequence[Mapping], names: Sequence[str], draws: Mapping,
                     final_versions: int, plays: int) -> dict:
    """The headline (docs/json-outputs.md): best solver, best setter, the share of resamples in
    which they differ, the sentence, and what is missing where a part is undefined."""
    best_solver = _best(rows, PRIMARY["solver"])
    best_setter = _best(rows, PRIMARY["setter"])
    share = None
    if PRIMARY["solver"] in draws and PRIMARY["setter"] in draws and len(names) >= 2:
        share = different_share(np.asarray(draws[PRIMARY["solver"]]),
                                np.asarray(draws[PRIMARY["setter"]]))
    missing = []
    if len(names) < 2:
        missing.append("players: a study needs two models at least for either role")
    if best_solver is None:
        missing.append(f"plays: no model has played another's final version unhinted yet "
                       f"({final_versions} final versions, {plays} plays so far)")
    if best_setter is None and len(names) < 3:
        missing.append(f"players: design compares an author's peers, so it needs three models "
                       f"at least ({len(names)} now)")
    elif best_setter is None:
        missing.append("plays: design needs a final version played unhinted on the same seed "
                       "by two peers of its author at least")
    if best_solver and best_setter and share is None and len(names) >= 2:
        missing.append("resamples: the intervals were not computed (recompute the figures "
                       "with resampling)")
    decide = [text for text in (_decide(best_solver, rows, "solver", plays),
                                _decide(best_setter, rows, "setter", plays)) if text]
    return {
        "best_solver": best_solver, "best_setter": best_setter, "different_share": share,
        "sentence": headline_sentence(best_solver=best_solver, best_setter=best_setter,
                                      share=share),
        "missing": "; ".join(missing) or None,
        "decide": decide,
        "checks": [],
    }


CHECK_REASONS = {
    "direct_common_panel_solve": "different plays: only the versions every model played, the "
                                 "model's own included",
    "solve_rating": "different weighting: the joint model weighs each version by its "
                    "difficulty, not each domain equally",
    "author_rating": "different figure: the joint model rates an author by its versions' "
                     "difficulty and hint effect, design by how its versions part its peers",
    "head_to_head_rating": "too few plays: each pair of models is one game",
}


def _leaders(rows: Sequence[Mapping], key: str, name: str = "player") -> list[str]:
    values = [(comparable(float(row[key])), row[name]) for row in rows
              if row.get(key) is not None]
    if not values:
        return []
    top = max(value for value, _ in values)
    return sorted(model for value, model in values if value == top)


def headline_checks(*, headline: Mapping, rows: Sequence[Mapping],
                    analytics: Mapping | None = None) -> list[dict]:
    """The other figures beside the primary ones: each check's leaders, whether they agree with
    the primary figure's, and why a check may disagree. A check agrees when its leaders
    include the primary figure's best."""
    analytics = analytics or {}
    irt = analytics.get("irt") or {}
    candidates = [
        ("solver", "direct_common_panel_solve", "common-panel solve",
         _leaders(rows, "direct_common_panel_solve", "model")),
        ("solver", "solve_rating", "the joint model's Solve rating",
         _leaders(irt.get("solvers") or [], "rating")),
        ("setter", "author_rating", "the joint model's Author rating",
         _leaders(irt.get("authors") or [], "rating")),
        ("setter", "head_to_head_rating", "ratings from head-to-head results",
         _leaders(analytics.get("ratings") or [], "rating")),
    ]
    checks = []
    for role, key, label, leaders in candidates:
        best = headline.get(f"best_{role}")
        if not leaders or best is None:
            continue
        primary = {best["model"], *best["tied_with"]}
        agrees = bool(primary & set(leaders))
        checks.append({"role": role, "figure": key, "label": label, "leaders": leaders,
                       "agrees": agrees, "why": None if agrees else CHECK_REASONS[key]})
    return checks


def headline_of(figures: Mapping) -> dict:
    """The figures' headline; for figures without models (nothing played yet), the headline
    that says so."""
    if figures.get("headline"):
        return dict(figures["headline"])
    models = figures.get("models") or []
    counts = figures.get("counts") or {}
    return headline_compute(rows=models, names=[row["model"] for row in models], draws={},
                            final_versions=counts.get("final_versions", 0),
                            plays=counts.get("plays", 0))
