"""The study's five findings as verdicts on this installation's data.

Each finding is one small function of the computed figures (the `analytics --json` result), so
a finding can change the figure it rests on without touching the others. Every finding has the
same fields: `id`, `claim`, `verdict` (`supported`, `contradicted`, `not enough data`), `figure`
({key, label, value, n_of}; `key` is its glossary entry), `interval` ({low, high, method}; null
while there is no figure; low and high null for a figure that is itself a probability), `n`, and
`needs` (what data would settle it; null once settled).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

from duels.analytics.scale import MIN_PLAYERS
from duels.analytics.transitivity import CHANCE_SHARE

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
NOT_ENOUGH = "not enough data"
VERDICTS = (SUPPORTED, CONTRADICTED, NOT_ENOUGH)
DECISIVE_PROBABILITY = 0.95  # a bootstrap probability this far from ½ decides
ALPHA = 0.05
MIN_CONVERGENCE_ENVIRONMENTS = 20  # a permutation test on fewer says little either way
MIN_CONVERGENCE_AUTHORS = 3
# A random tournament of n players is fully transitive with probability n!/2^C(n,2): 37% for 4,
# 12% for 5, 2% for 6. Below 6 players order arises by chance too often to support the claim.
MIN_TRANSITIVE_PLAYERS = 6
MIN_DIVERGENCE_PLAYERS = 3  # two rankings of fewer players say nothing about who leads both


def _finding(id: str, claim: str, verdict: str, *, key: str, label: str, value, n: int,
             n_of: str, interval: dict | None = None, needs: str | None = None) -> dict:
    return {
        "id": id, "claim": claim, "verdict": verdict,
        "figure": {"key": key, "label": label, "value": value, "n_of": n_of},
        "interval": interval, "n": n,
        "needs": None if verdict != NOT_ENOUGH else needs,
    }


def _interval(low, high, method: str | None) -> dict | None:
    if low is None or high is None:
        return None
    return {"low": low, "high": high, "method": method}


def _no_interval(method: str) -> dict:
    """A figure that is itself a probability: no interval, and the card says why."""
    return {"low": None, "high": None, "method": method}


def _above(id: str, claim: str, kwargs: dict, *, low: float, high: float, threshold: float,
           needs: str) -> dict:
    """Supported when the interval lies above `threshold`, contradicted when at or below it."""
    if low > threshold:
        return _finding(id, claim, SUPPORTED, **kwargs)
    if high <= threshold:
        return _finding(id, claim, CONTRADICTED, **kwargs)
    return _finding(id, claim, NOT_ENOUGH, **kwargs, needs=needs)


def _resamples(result: dict) -> int:
    return (result.get("summary") or {}).get("resamples") or 0


def _tops_apart(divergence: dict) -> bool:
    """No player who could be the top solver (its interval reaches the best lower bound) could
    also be the top setter. The bootstrap share alone said `supported` in 3 of 9 simulated
    tournaments whose top solver was the top setter (benchmarks/coverage_bench.py)."""
    solvers, authors = (divergence.get("top_solver_candidates"),
                        divergence.get("top_author_candidates"))
    return solvers is None or not set(solvers) & set(authors or ())


def _tops_same(divergence: dict) -> bool:
    """One player alone could be the top solver, and the same one alone the top setter."""
    solvers, authors = (divergence.get("top_solver_candidates"),
                        divergence.get("top_author_candidates"))
    return solvers is None or (len(solvers) == 1 and solvers == authors)


# The words a finding uses for the plays it rests on: the duels of the duel-based analytics, or
# a study's field (every model plays every version; head-to-head results derived from it).
WORDS = {
    "duels": {"plays": "finished duels", "more": "more duels", "among": "duels among",
              "watching": "watching others' duels", "resampled": "whole duels"},
    "study": {"plays": "the study's plays", "more": "more versions per author and more seeds",
              "among": "a study of", "watching": "others' environments and results",
              "resampled": "versions within their authors and domains"},
}


def finding_solver_not_setter(result: dict, words: dict = WORDS["duels"]) -> dict:
    """(1) The strongest solver is not the strongest setter."""
    claim = "The strongest solver is not the strongest setter."
    irt = result.get("irt") or {}
    joint = irt.get("divergence") or {}
    if (joint.get("players") or 0) >= MIN_DIVERGENCE_PLAYERS:
        # The joint model's Solve and Author ratings: who met whom is accounted for. Only
        # ranked players count (enough data for an interval); the others are listed apart.
        # While fewer than three are ranked in both roles, the duel-level rankings decide (the
        # figure the page shows is always the one the verdict used).
        divergence = joint
        label = "share of resamples where the top Solve rating is not the top Author rating"
        method = (f"none: the figure is itself a probability over {irt['fit']['resamples']} "
                  "bootstrap resamples of environments (stratified by author); players with "
                  "too few episodes or environments are not ranked")
    else:
        divergence = result.get("divergence") or {}
        label = "share of resamples where the top solver is not the top setter"
        method = (f"none: the figure is itself a probability over {_resamples(result)} "
                  f"bootstrap resamples of {words['resampled']}")
    p = divergence.get("p_top_differs")
    n = divergence.get("players") or 0
    kwargs = {"key": "p_top_differs", "label": label, "value": p, "n": n,
              "n_of": "players who both set and solved", "interval": _no_interval(method)}
    if p is None or n < MIN_DIVERGENCE_PLAYERS:
        finding = _finding("solver_not_setter", claim, NOT_ENOUGH, **kwargs,
                           needs=f"{words['plays']} in which at least three players have both "
                                 "set and solved environments")
    elif p >= DECISIVE_PROBABILITY and _tops_apart(divergence):
        finding = _finding("solver_not_setter", claim, SUPPORTED, **kwargs)
    elif p <= 1 - DECISIVE_PROBABILITY and _tops_same(divergence):
        finding = _finding("solver_not_setter", claim, CONTRADICTED, **kwargs)
    else:
        finding = _finding("solver_not_setter", claim, NOT_ENOUGH, **kwargs,
                           needs=f"{words['more']} among the leading players, until the top "
                                 "solver "
                                 "and the top setter agree or differ in at least 95% of "
                                 "resamples and their 95% intervals tell the leaders apart")
    # The rank correlation of the two rankings, with its interval, beside the probability.
    finding["correlation"] = {key: divergence.get(key)
                              for key in ("kendall_tau", "low", "high")} if divergence else None
    return finding


def finding_small_models_set_harder(result: dict, words: dict = WORDS["duels"]) -> dict:
    """(2) Smaller models write harder environments and learn more from others' duels."""
    claim = ("Smaller models write harder environments and learn more from watching "
             f"{words['watching']}.")
    scale = result.get("scale") or {}
    n = scale.get("n") or result.get("summary", {}).get("players_with_size", 0)
    rho, low, high = scale.get("setter_spearman"), scale.get("low"), scale.get("high")
    strength = "Author rating" if result.get("irt") else "setter strength"
    kwargs = {"key": "scale_rho", "label": f"Spearman ρ of model size with {strength}",
              "value": rho, "n": n, "n_of": "players with a known size who set environments",
              "interval": _interval(low, high, scale.get("method"))}
    if rho is None or n < MIN_PLAYERS:
        return _finding("small_models_set_harder", claim, NOT_ENOUGH, **kwargs,
                        needs=f"a size (parameters_b, entered on each player's page) for at least "
                              f"{MIN_PLAYERS} players that have set environments in "
                              f"{words['plays']}")
    # Larger models learning more from others' duels would go against the second half.
    u_low = scale.get("u_low")
    uplift_against = u_low is not None and u_low > 0
    if (low is not None and low > 0) or uplift_against:
        return _finding("small_models_set_harder", claim, CONTRADICTED, **kwargs)
    if high is not None and high < 0:
        return _finding("small_models_set_harder", claim, SUPPORTED, **kwargs)
    return _finding("small_models_set_harder", claim, NOT_ENOUGH, **kwargs,
                    needs=f"more sized players or {words['more']}, until the interval "
                          "of ρ lies on one side of 0")


def finding_transitive(result: dict, words: dict = WORDS["duels"]) -> dict:
    """(3) Head-to-head results are transitive: a stable ranking forms."""
    claim = "Head-to-head results are transitive: a stable ranking forms."
    transitivity = result.get("transitivity") or {}
    share = transitivity.get("transitive_share")
    n = transitivity.get("decided_triples") or 0
    low, high = transitivity.get("share_low"), transitivity.get("share_high")
    kwargs = {"key": "transitive_share", "label": "share of decided triples that are ordered "
              f"(chance {CHANCE_SHARE:g})", "value": share, "n": n, "n_of": "decided triples",
              "interval": _interval(low, high, transitivity.get("share_method"))}
    if share is None or low is None:
        return _finding("transitive", claim, NOT_ENOUGH, **kwargs,
                        needs=f"{words['among']} at least three players so that every pair of "
                              "some triple has a winner by points")
    if (transitivity.get("triples") or 0) < comb(MIN_TRANSITIVE_PLAYERS, 3):
        return _finding("transitive", claim, NOT_ENOUGH, **kwargs,
                        needs=f"{words['among']} at least {MIN_TRANSITIVE_PLAYERS} players: "
                              "among fewer, a random tournament is often fully ordered by "
                              "chance")
    return _above(
        "transitive", claim, kwargs, low=low, high=high, threshold=CHANCE_SHARE,
        needs=f"more decided pairs, until the interval clears the chance level "
              f"{CHANCE_SHARE:g}")


def finding_designs_converge(result: dict, words: dict = WORDS["duels"]) -> dict:
    """(4) Independent authors converge on the same designs."""
    claim = "Independent authors converge on the same environment designs."
    convergence = result.get("convergence") or {}
    p = convergence.get("p_value")
    n = convergence.get("environments") or 0
    authors = convergence.get("authors") or 0
    cross = convergence.get("cross_author_clusters") or 0
    kwargs = {"key": "convergence_p", "label": "permutation p-value of cross-author similarity",
              "value": p, "n": n, "n_of": f"designs by named authors ({cross} cross-author "
                                          "near-duplicate clusters)",
              "interval": _no_interval("none: the figure is a permutation-test p-value "
                                       "(author labels shuffled)")}
    if p is not None and p < ALPHA and cross:
        return _finding("designs_converge", claim, SUPPORTED, **kwargs)
    if (p is not None and p >= ALPHA and n >= MIN_CONVERGENCE_ENVIRONMENTS
            and authors >= MIN_CONVERGENCE_AUTHORS):
        return _finding("designs_converge", claim, CONTRADICTED, **kwargs)
    return _finding("designs_converge", claim, NOT_ENOUGH, **kwargs,
                    needs=f"at least {MIN_CONVERGENCE_ENVIRONMENTS} designs from "
                          f"{MIN_CONVERGENCE_AUTHORS} or more authors (now {n} from {authors})")


def finding_gain_predicts_transfer(result: dict, words: dict = WORDS["duels"]) -> dict:
    """(5) Hint gain predicts how much a learner improves after training on an environment."""
    claim = "Hint gain predicts how much a learner improves after training on an environment."
    transfer = result.get("transfer") or {}
    rho, low, high = transfer.get("spearman"), transfer.get("low"), transfer.get("high")
    n = transfer.get("n") or 0
    kwargs = {"key": "transfer_rho", "label": "Spearman ρ of hint gain with improvement",
              "value": rho, "n": n, "n_of": "transfer results joined to hint gains",
              "interval": _interval(low, high, transfer.get("method"))}
    if rho is None or low is None:
        return _finding("gain_predicts_transfer", claim, NOT_ENOUGH, **kwargs,
                        needs="at least 3 imported transfer results (before/after a learner "
                              "trained on an environment) for environments it has played")
    return _above("gain_predicts_transfer", claim, kwargs, low=low, high=high, threshold=0.0,
                  needs="more transfer results, until the interval of ρ lies above or below 0")


FINDINGS: tuple[Callable[[dict, dict], dict], ...] = (
    finding_solver_not_setter,
    finding_small_models_set_harder,
    finding_transitive,
    finding_designs_converge,
    finding_gain_predicts_transfer,
)


def findings_compute(result: dict, *, field: str = "duels") -> list[dict]:
    """The five findings, in their fixed order, from the computed figures, in the words of
    the `field` their plays come from (`duels` or `study`)."""
    return [finding(result, WORDS[field]) for finding in FINDINGS]
