"""Solve and Author ratings, environment difficulty and hint effect from the joint model.

Solve rating: the solver's ability θ (mean 0), shown as 1000 + 173.7·θ, the Elo-like scale of
the duel ratings: 400 points more means ten times the odds of passing the same environment.

Author rating: for each environment j its *field setter score* S_j, the expected setter score
p_h·(1 − p_u) of the environment against every ranked solver except its author, equally weighted,
under the fitted θ, b and γ (p_u = σ(θ − b), p_h = σ(θ − b + γ)). It is the probability that a
solver of the field fails without the hint and passes with it, so it rewards environments that are
hard *and* learnable, not merely hard. An author's score is the mean S_j of its environments played
in both conditions; its Author rating is 1000 + 173.7·(logit score − mean logit score over
authors), the same scale as the Solve rating: 400 points means ten times the odds.

Who is ranked. A solver gets an interval, and a place in the Solve ranking, only after meeting at
least three environments; an author only after three of its environments were played in both
conditions. Below that a player is listed apart ("too few episodes" / "too few environments")
with its counts, never ranked, so one lucky pass cannot top a ranking. The field an environment is
scored against is the ranked solvers only (minus its author), and only environments played both
unhinted and hinted count towards an Author rating: one condition alone has no setter score.

Intervals. θ and the Author rating: bootstrap over environments, stratified by author, with the
Rao–Wu rescaling. A plain stratified bootstrap (redraw each author's n environments with
replacement) shrinks the variance of a stratum mean by (n − 1)/n — a quarter when an author wrote
four, and tournaments give each author only a few. Rao and Wu (1988) redraw n − 1 of the n and
weigh each draw n/(n − 1): the variance is then unbiased for every stratum of two or more. Strata
are kept (rather than dropped) because the tournament fixes how many environments each author
writes, so between-author differences are not sampling noise, and every resample must hold each
author's environments for its Author rating. Authors (or unknown authors) with a single
environment cannot show their own spread, so they share one pooled stratum. Each resample refits
the whole model, warm started at the full fit; an environment's data and prior weigh its
resampling weight. The same resamples give Kendall τ of the Solve and Author ratings and
P(top solver ≠ top author).
What the Author rating's interval is about: the author, not the environments it happened to
write — the rating its environments get on average over the environments it would write (its
propensity), as θ's interval is about the solver's ability and not about the environments it
met. The first finding compares a player's skill as solver with its skill as setter, and a skill
is what the next environment will show. Resampling an author's environments measures exactly
how much a mean of n of them varies from one draw of n to another; about the very environments
written their spread would be no uncertainty at all. The Rao–Wu draws have the unbiased variance
of that mean, but their percentiles stand where a normal's do, where a mean of n units with an
estimated spread needs Student's t with n − 1 degrees of freedom: each author's draws are moved
away from its rating by t(n − 1, 0.975)/1.96 (1.42 at n = 5) before the percentiles. Measured on
planted propensities (benchmarks/coverage_bench.py, 60 tournaments each of 4 players with 3
environments, 8 with 5 and 20 with 6): the plain percentile interval covered 0.88 / 0.89 / 0.90,
the widened one 0.996 / 0.971 / 0.953 (237 rating points wide at 8 players instead of 167; t(2)
at three environments is cautious). Against the rating of the environments written both cover
0.95–0.998: too wide for a figure the interval is not about.
Solve rating θ: the same resamples, as a basic (reflected) interval: 2θ − the 97.5% and 2.5%
percentiles of the refitted θ. Measured on planted abilities (benchmarks/coverage_bench.py, 100
tournaments of 8 players with 5 environments each, 40 of 4 players with 3 and of 20 with 6): the
percentile interval covered 0.93 / 0.87 / 0.93, the basic one 0.95 / 0.88 / 0.94 at the same
width, the bias-corrected (BC) one 0.93 / 0.89 / 0.94. The fit is not shrunk toward 0 in a way
that hurts: its estimates lie on average 0.01 logits *farther* from 0 than the truth (the priors
are weak; few episodes spread a logistic fit out), and refits spread again, so the percentiles
stand a little outside; reflecting puts them back. A normal (Laplace) interval from the inverse
Hessian covered 0.95–0.96 at every size, but where each environment meets one solver (duels
only) θ is identified only through the prior on difficulty and its SE is the prior's spread: in
a five-player round robin of duels (tests/duels/analytics/test_findings.py) it was 2.5 times the
bootstrap's width and no solver stood apart; the resampled environments measure the spread the
tournament really has. Four players with three environments each leave too few environments
per author to resample: θ then covers about 0.88.
Difficulty b and hint effect γ: normal (Laplace) approximation from the inverse Hessian, which
includes the uncertainty of the abilities; resampling environments cannot measure a single
environment's own sampling noise. Held-out accuracy: 5-fold cross-validation over episodes, each
held-out episode predicted to pass when its fitted probability exceeds ½.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import expit, logit

from duels.analytics.bootstrap_weights import resampling_strata, rescaled_bootstrap_weights
from duels.analytics.data import EnvironmentRecord, EpisodeRecord
from duels.analytics.divergence import kendall_tau_rows
from duels.analytics.intervals import basic_interval, percentile_interval, widened_draws
from duels.analytics.irt import IrtCells, IrtParameters, IrtProblem, irt_cells
from duels.analytics.irt_fit import irt_fit, irt_fit_batch, irt_laplace
from duels.analytics.proportions import Z95

SCALE = 400 / math.log(10)
ANCHOR = 1000.0
FOLDS = 5
IRT_RESAMPLES = 200  # each resample refits the model: more would cost more than it tells
MIN_ENVIRONMENTS_FOR_INTERVAL = 3
# Bootstrap refits start at the full fit and need only this precision (logits).
BOOTSTRAP_TOLERANCE = 1e-4
BOOTSTRAP_BATCH_VALUES = 400_000  # cells (or Hessian terms) × resamples refitted together


def to_scale(theta: np.ndarray | float) -> np.ndarray | float:
    """Logits (mean 0) on the 1000-anchored rating scale of the duel ratings."""
    return ANCHOR + SCALE * theta


class _Authorship:
    """Which environments count for which author, and how to score them against the field."""

    def __init__(self, cells: IrtCells, environments: Sequence[EnvironmentRecord],
                 field: np.ndarray) -> None:
        author_of = {env.uuid: env.author for env in environments}
        names = [author_of.get(uuid) for uuid in cells.environments]
        self.authors = sorted({name for name in names if name})
        index = {name: k for k, name in enumerate(self.authors)}
        self.author = np.array([index[n] if n else -1 for n in names], dtype=np.int64)
        solver_index = {name: i for i, name in enumerate(cells.solvers)}
        self.author_solver = np.array([solver_index.get(n, -1) if n else -1 for n in names],
                                      dtype=np.int64)
        trials_by = np.zeros((len(names), 2))
        np.add.at(trials_by, (cells.environment, cells.hinted.astype(int)), cells.trials)
        self.unhinted_trials, self.hinted_trials = trials_by[:, 0], trials_by[:, 1]
        self.scored = (self.unhinted_trials > 0) & (self.hinted_trials > 0)
        # The field: solvers with enough data to be ranked (a boolean per solver).
        self.field = field
        position = np.cumsum(field) - 1
        self.author_in_field = np.where(
            (self.author_solver >= 0) & field[np.maximum(self.author_solver, 0)],
            position[np.maximum(self.author_solver, 0)], -1)

    def field_scores(self, x: IrtParameters, chosen: np.ndarray) -> np.ndarray:
        """S_j for the environments in `chosen` (indices): the mean over the ranked solvers, the
        author sitting out of its own field; NaN where that leaves nobody."""
        theta = x.theta[self.field]
        b = x.difficulty[chosen][:, None]
        unhinted = expit(theta[None, :] - b)
        hinted = expit(theta[None, :] - b + x.hint_effect[chosen][:, None])
        score = hinted * (1 - unhinted)
        own_solver = self.author_in_field[chosen]
        in_field = own_solver >= 0
        own = np.where(in_field, score[np.arange(len(chosen)), np.maximum(own_solver, 0)]
                       if len(theta) else 0.0, 0.0)
        size = len(theta) - in_field
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(size > 0, (score.sum(axis=1) - own) / np.maximum(size, 1), np.nan)

    def ratings(self, scores: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each author's mean field setter score (weighted) and its Author rating."""
        usable = self.scored & (self.author >= 0) & (weight > 0) & np.isfinite(scores)
        scores = np.where(usable, scores, 0.0)
        count = len(self.authors)
        total = np.bincount(self.author[usable], weights=(weight * scores)[usable],
                            minlength=count)
        mass = np.bincount(self.author[usable], weights=weight[usable], minlength=count)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(mass > 0, total / mass, np.nan)
        logits = logit(np.clip(mean, 1e-6, 1 - 1e-6))
        finite = np.isfinite(mean)
        centre = logits[finite].mean() if finite.any() else 0.0
        return mean, np.where(finite, to_scale(logits - centre), np.nan)


def _bootstrap(problem: IrtProblem, start: IrtParameters, authorship: _Authorship,
               resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Resampled centred θ (resamples × solvers) and Author ratings (resamples × authors)."""
    cells = problem.cells
    rng = np.random.default_rng(seed)
    strata = resampling_strata(authorship.author)
    weights = rescaled_bootstrap_weights(rng, strata, resamples)
    theta = np.full((resamples, len(cells.solvers)), np.nan)
    author = np.full((resamples, len(authorship.authors)), np.nan)
    # Resamples are refitted together, a batch at a time (each as it would be alone), in
    # batches small enough that their arrays stay within a few megabytes.
    per_resample = max(len(cells.trials), len(problem.pairs.couple_target), 1)
    batch = max(1, BOOTSTRAP_BATCH_VALUES // per_resample)
    for first in range(0, resamples, batch):
        chosen_rows = np.arange(first, min(first + batch, resamples))
        resample = IrtProblem(cells, environment_weight=weights[chosen_rows],
                              pairs=problem.pairs)
        fitted = irt_fit_batch(resample, start=start, tolerance=BOOTSTRAP_TOLERANCE,
                               max_iterations=20).centred()
        for row, r in enumerate(chosen_rows):
            x = fitted.rows(row)
            played = np.bincount(cells.solver, weights=resample.trials[row],
                                 minlength=len(cells.solvers)) > 0
            theta[r] = np.where(played, x.theta, np.nan)
            chosen = np.flatnonzero((weights[r] > 0) & authorship.scored)
            scores = np.zeros(len(cells.environments))
            scores[chosen] = authorship.field_scores(x, chosen)
            author[r] = authorship.ratings(scores, weights[r])[1]
    return theta, author


def _held_out_accuracy(problem: IrtProblem, start: IrtParameters,
                       seed: int) -> tuple[float, float] | None:
    """Cross-validated accuracy over episodes, and the majority-class baseline's."""
    cells = problem.cells
    count = len(cells.episode_cell)
    if count < 4 * FOLDS:
        return None
    fold = np.random.default_rng(seed).permutation(count) % FOLDS
    code = cells.episode_cell * FOLDS + fold
    size = len(cells.trials) * FOLDS
    fold_pass = np.bincount(code, weights=cells.episode_success, minlength=size).reshape(-1, FOLDS)
    fold_trials = np.bincount(code, minlength=size).reshape(-1, FOLDS).astype(np.float64)
    # The folds' training sets, one row each, fitted together.
    train = IrtProblem(cells, successes=cells.successes - fold_pass.T,
                       trials=cells.trials - fold_trials.T, pairs=problem.pairs)
    fitted = expit(train.logits(irt_fit_batch(train, start=start, tolerance=1e-6)))
    correct = baseline = 0.0
    for f in range(FOLDS):
        p = fitted[f]
        held_pass, held_trials = fold_pass[:, f], fold_trials[:, f]
        correct += np.sum(np.where(p > 0.5, held_pass, np.where(
            p < 0.5, held_trials - held_pass, held_trials / 2)))
        train_rate = train.successes[f].sum() / max(train.trials[f].sum(), 1)
        baseline += held_pass.sum() if train_rate >= 0.5 else (held_trials - held_pass).sum()
    return correct / count, baseline / count


def _divergence(solvers: list[str], theta: np.ndarray, theta_boot: np.ndarray,
                theta_interval: tuple[np.ndarray, np.ndarray], authors: list[str],
                rating: np.ndarray, author_boot: np.ndarray,
                author_interval: tuple[np.ndarray, np.ndarray]) -> dict | None:
    """Kendall τ between Solve and Author ratings of players rated in both roles; who could be
    on top by the intervals the pages show (`theta_interval`, `author_interval`)."""
    common = [name for name in solvers if name in set(authors)]
    finite = [name for name in common if np.isfinite(rating[authors.index(name)])]
    if len(finite) < 2:
        return None
    s_index = [solvers.index(name) for name in finite]
    a_index = [authors.index(name) for name in finite]
    tau = float(kendall_tau_rows(theta[s_index], rating[a_index])[0])
    boot_s, boot_a = theta_boot[:, s_index], author_boot[:, a_index]
    boot_tau = kendall_tau_rows(boot_s, boot_a)
    low, high = percentile_interval(boot_tau[:, None])
    top_s = np.argmax(np.where(np.isfinite(boot_s), boot_s, -np.inf), axis=1)
    top_a = np.argmax(np.where(np.isfinite(boot_a), boot_a, -np.inf), axis=1)
    # Who could be on top: every player whose interval reaches the best lower bound.
    s_low, s_high = theta_interval[0][s_index], theta_interval[1][s_index]
    a_low, a_high = author_interval[0][a_index], author_interval[1][a_index]
    return {
        "top_solver_candidates": [name for name, high in zip(finite, s_high, strict=True)
                                  if high >= np.nanmax(s_low)],
        "top_author_candidates": [name for name, high in zip(finite, a_high, strict=True)
                                  if high >= np.nanmax(a_low)],
        "kendall_tau": tau, "low": float(low[0]), "high": float(high[0]),
        "p_top_differs": float(np.mean(top_s != top_a)) if len(top_s) else None,
        "top_solver": finite[int(np.argmax(theta[s_index]))],
        "top_author": finite[int(np.argmax(rating[a_index]))],
        "players": len(finite),
    }


def too_few_reason(*, role: str, episodes: int, environments: int) -> str:
    """Why a player is listed apart instead of ranked, in words for the pages."""
    need = MIN_ENVIRONMENTS_FOR_INTERVAL
    if role == "solver":
        return (f"too few episodes: {episodes} episode{'s' * (episodes != 1)} on {environments} "
                f"environment{'s' * (environments != 1)}; a Solve rating is ranked from "
                f"{need} environments")
    return (f"too few environments: {environments} played in both conditions; an Author "
            f"rating is ranked from {need}")


def _interval_if(enough: np.ndarray, low: np.ndarray,
                 high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval where there is enough data for one, NaN (unknown) elsewhere."""
    return np.where(enough, low, np.nan), np.where(enough, high, np.nan)


def irt_compute(
    *,
    episodes: Sequence[EpisodeRecord],
    environments: Sequence[EnvironmentRecord],
    resamples: int = 200,
    seed: int = 0,
) -> dict | None:
    """Every figure of the joint model; None when there are no finished episodes."""
    cells = irt_cells(episodes)
    if cells is None:
        return None
    problem = IrtProblem(cells)
    fit = irt_fit(problem)
    x = fit.parameters.centred()
    se_difficulty, se_hint = irt_laplace(problem, fit.parameters)
    met = np.zeros((len(cells.solvers), len(cells.environments)), dtype=bool)
    met[cells.solver, cells.environment] = True
    ranked_solver = met.sum(axis=1) >= MIN_ENVIRONMENTS_FOR_INTERVAL
    authorship = _Authorship(cells, environments, ranked_solver)
    chosen = np.flatnonzero(authorship.scored)
    field_score = np.full(len(cells.environments), np.nan)
    field_score[chosen] = authorship.field_scores(x, chosen)
    ones = np.ones(len(cells.environments))
    author_score, author_rating = authorship.ratings(field_score, ones)
    theta_boot, author_boot = _bootstrap(problem, fit.parameters, authorship, resamples, seed)

    theta_low, theta_high = _interval_if(ranked_solver, *basic_interval(x.theta, theta_boot))
    counted = authorship.scored & (authorship.author >= 0) & np.isfinite(field_score)
    written = np.bincount(authorship.author[counted], minlength=len(authorship.authors))
    ranked_author = (written >= MIN_ENVIRONMENTS_FOR_INTERVAL) & np.isfinite(author_rating)
    author_low, author_high = _interval_if(ranked_author, *percentile_interval(
        widened_draws(author_rating, author_boot, written, rescaled=True)))

    solver_episodes = np.bincount(cells.solver, weights=cells.trials, minlength=len(cells.solvers))
    solvers = [
        {"player": name, "theta": x.theta[i], "low": theta_low[i], "high": theta_high[i],
         "rating": to_scale(x.theta[i]), "rating_low": to_scale(theta_low[i]),
         "rating_high": to_scale(theta_high[i]), "episodes": int(solver_episodes[i]),
         "environments": int(met[i].sum()), "ranked": bool(ranked_solver[i]),
         "reason": None if ranked_solver[i] else too_few_reason(
             role="solver", episodes=int(solver_episodes[i]), environments=int(met[i].sum()))}
        for i, name in enumerate(cells.solvers)
    ]
    solvers.sort(key=lambda row: (-row["theta"], row["player"]))
    written_any = np.bincount(authorship.author[authorship.scored & (authorship.author >= 0)],
                              minlength=len(authorship.authors))
    authors = [
        {"player": name, "rating": author_rating[k], "low": author_low[k],
         "high": author_high[k], "setter_score": author_score[k],
         "environments": int(written[k]), "ranked": bool(ranked_author[k]),
         "reason": None if ranked_author[k] else too_few_reason(
             role="author", episodes=0, environments=int(written[k]))}
        for k, name in enumerate(authorship.authors) if written_any[k]
    ]
    authors.sort(key=lambda row: (-np.nan_to_num(row["rating"], nan=-np.inf), row["player"]))

    has_unhinted = authorship.unhinted_trials > 0
    rows = []
    for j, uuid in enumerate(cells.environments):
        difficulty = x.difficulty[j] if has_unhinted[j] else None
        hint = x.hint_effect[j] if authorship.scored[j] else None
        rows.append({
            "uuid": uuid,
            "difficulty": difficulty,
            "d_low": None if difficulty is None else difficulty - Z95 * se_difficulty[j],
            "d_high": None if difficulty is None else difficulty + Z95 * se_difficulty[j],
            "hint_effect": hint,
            "h_low": None if hint is None else hint - Z95 * se_hint[j],
            "h_high": None if hint is None else hint + Z95 * se_hint[j],
            "n": int(authorship.unhinted_trials[j] + authorship.hinted_trials[j]),
            "field_setter_score": field_score[j],
        })
    rows.sort(key=lambda row: (row["difficulty"] is None, -(row["difficulty"] or 0.0),
                               row["uuid"]))
    accuracy = _held_out_accuracy(problem, fit.parameters, seed)
    return {
        "solvers": [row for row in solvers if row["ranked"]],
        "solvers_too_few": [row for row in solvers if not row["ranked"]],
        "authors": [row for row in authors if row["ranked"]],
        "authors_too_few": [row for row in authors if not row["ranked"]],
        "environments": rows,
        "fit": {
            "log_likelihood": fit.log_likelihood,
            "episodes": cells.episodes,
            "held_out_accuracy": accuracy[0] if accuracy else None,
            "held_out_baseline": accuracy[1] if accuracy else None,
            "folds": FOLDS,
            "solvers": len(cells.solvers),
            "environments": len(cells.environments),
            "resamples": resamples,
            "iterations": fit.iterations,
        },
        "divergence": _divergence(
            [name for i, name in enumerate(cells.solvers) if ranked_solver[i]],
            x.theta[ranked_solver], theta_boot[:, ranked_solver],
            (theta_low[ranked_solver], theta_high[ranked_solver]),
            [name for k, name in enumerate(authorship.authors) if ranked_author[k]],
            author_rating[ranked_author], author_boot[:, ranked_author],
            (author_low[ranked_author], author_high[ranked_author])),
    }
