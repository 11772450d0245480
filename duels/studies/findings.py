"""The first of the seed's findings on a study, in the study's own terms: the strongest solver
(by canonical solve) is not the strongest setter (by design), decided from the same resamples
and rank ranges as the headline, so the finding and the headline never disagree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from duels.analytics.findings import (
    CONTRADICTED,
    DECISIVE_PROBABILITY,
    MIN_DIVERGENCE_PLAYERS,
    NOT_ENOUGH,
    SUPPORTED,
)
from duels.studies.headline import PRIMARY


def _could_lead(rows: Sequence[Mapping], figure: str) -> set[str]:
    """The models whose rank range reaches first place by `figure`."""
    return {row["model"] for row in rows
            if ((row.get("rank_ranges") or {}).get(figure) or [0])[0] == 1}


def study_solver_not_setter(*, headline: Mapping, rows: Sequence[Mapping]) -> dict:
    """Supported when the best solver and the best setter differ in at least 95% of resamples
    and no model could be first in both roles; contradicted when they are the same model in at
    least 95% and one model alone is first in both; else not enough data, with what would
    settle it."""
    claim = "The strongest solver is not the strongest setter."
    share = headline.get("different_share")
    both = sum(row.get(PRIMARY["solver"]) is not None and row.get(PRIMARY["setter"]) is not None
               for row in rows)
    solvers, setters = _could_lead(rows, PRIMARY["solver"]), _could_lead(rows, PRIMARY["setter"])
    finding = {
        "id": "solver_not_setter", "claim": claim, "verdict": NOT_ENOUGH,
        "figure": {"key": "different_share",
                   "label": "share of resamples where the best solver by canonical solve is "
                            "not the best setter by design",
                   "value": share, "n_of": "models with both figures"},
        "interval": {"low": None, "high": None,
                     "method": "none: the figure is itself a share of the figures' resamples"},
        "n": both, "needs": None,
        "evidence": headline.get("sentence"),
    }
    if share is None or both < MIN_DIVERGENCE_PLAYERS:
        finding["needs"] = (f"at least {MIN_DIVERGENCE_PLAYERS} models that both wrote final "
                            "versions and played the others' ("
                            f"{both} now)" + (f"; {headline['missing']}"
                                              if headline.get("missing") else ""))
    elif share >= DECISIVE_PROBABILITY and not solvers & setters:
        finding["verdict"] = SUPPORTED
    elif share <= 1 - DECISIVE_PROBABILITY and len(solvers) == 1 and solvers == setters:
        finding["verdict"] = CONTRADICTED
    else:
        finding["needs"] = " ".join(headline.get("decide") or []) or (
            "more versions per author and more seeds, until the best solver and the best "
            "setter differ (or agree) in at least 95% of resamples and no model could be "
            "first in both roles")
    return finding
