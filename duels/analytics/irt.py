"""Joint item-response model: solver ability, environment difficulty and the hint's effect.

    P(success | solver i, environment j, hinted h) = σ(θ_i − b_j + h·γ_j)

θ_i is the solver's ability, b_j the environment's difficulty and γ_j the hint's effect, all on
the logit scale; γ may come out negative (a misleading hint). Episodes are first aggregated into
(solver, environment, hinted) cells of passes and trials, so the cost of a fit grows with the
number of cells, not episodes.

Estimation is regularised maximum likelihood (a maximum a posteriori fit): weak Gaussian priors
θ ~ N(0, 3²), b ~ N(0, 2.5²), γ ~ N(0, 2.5²) keep environments (and solvers) with all-pass or
all-fail results finite while moving well-measured ones very little. Newton's method with a
backtracking line search solves it exactly: the Hessian's environment block is 2×2 per environment,
so each step only solves a solver-by-solver system (the Schur complement). The scale's origin is
fixed by reporting θ − mean θ (and b − mean θ); the likelihood does not change under that shift.

`irt_laplace` gives the normal (Laplace) approximation of each environment's b and γ from the
inverse Hessian, including the uncertainty of the abilities they are measured against.

Batches: a problem's counts and weights may carry a leading axis of rows (bootstrap resamples,
cross-validation folds) over the same cells; `irt_fit_batch` then fits every row at once, each row
taking exactly the steps it would take alone. A bootstrap of small tournaments spent nearly all
its time in the per-call overhead of numpy, once per row and Newton step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

from duels.analytics.data import EpisodeRecord

PRIOR_SD_ABILITY = 3.0
PRIOR_SD_DIFFICULTY = 2.5
PRIOR_SD_HINT = 2.5


@dataclass(frozen=True)
class IrtCells:
    """Episodes aggregated by (solver, environment, hinted), plus each episode's cell."""

    solvers: list[str]
    environments: list[str]
    solver: np.ndarray  # per cell: solver index
    environment: np.ndarray  # per cell: environment index
    hinted: np.ndarray  # per cell: 1.0 hinted, 0.0 unhinted
    successes: np.ndarray
    trials: np.ndarray
    episode_cell: np.ndarray  # per episode: its cell (cross-validation splits episodes)
    episode_success: np.ndarray

    @property
    def episodes(self) -> int:
        return int(self.trials.sum())


def irt_cells(episodes: Sequence[EpisodeRecord]) -> IrtCells | None:
    """Aggregate episodes into cells; None when there are none."""
    if not episodes:
        return None
    solver_index: dict[str, int] = {}
    environment_index: dict[str, int] = {}
    count = len(episodes)
    solver = np.fromiter((solver_index.setdefault(e.solver, len(solver_index))
                          for e in episodes), dtype=np.int64, count=count)
    environment = np.fromiter((environment_index.setdefault(e.environment, len(environment_index))
                               for e in episodes), dtype=np.int64, count=count)
    hinted = np.fromiter((e.hinted for e in episodes), dtype=np.int64, count=count)
    success = np.fromiter((e.success for e in episodes), dtype=np.float64, count=count)
    code = (environment * len(solver_index) + solver) * 2 + hinted
    codes, episode_cell = np.unique(code, return_inverse=True)
    return IrtCells(
        solvers=list(solver_index),
        environments=list(environment_index),
        solver=(codes // 2) % len(solver_index),
        environment=codes // 2 // len(solver_index),
        hinted=(codes % 2).astype(np.float64),
        successes=np.bincount(episode_cell, weights=success, minlength=len(codes)),
        trials=np.bincount(episode_cell, minlength=len(codes)).astype(np.float64),
        episode_cell=episode_cell,
        episode_success=success,
    )


def _sum_by(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """`np.bincount(index, weights, minlength=size)` along the last axis of `weights`, for one
    row or a batch of rows; each row's bins add its values in the same order as it would alone."""
    if weights.ndim == 1:
        return np.bincount(index, weights=weights, minlength=size)
    rows = weights.shape[0]
    flat = (index + size * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, weights=weights.ravel(), minlength=rows * size).reshape(rows, size)


def _diagonal(values: np.ndarray) -> np.ndarray:
    """Square matrices (one per row) with `values` on their diagonal."""
    size = values.shape[-1]
    matrix = np.zeros((*values.shape, size))
    matrix[..., np.arange(size), np.arange(size)] = values
    return matrix


class _Pairs:
    """The solver × environment blocks of the Hessian as (solver, environment) pairs.

    Pure numpy (bincount) instead of dense or sparse matrix products: linear in the data and
    free of BLAS threads, which contend badly on a busy machine.
    """

    def __init__(self, cells: IrtCells) -> None:
        solvers, environments = len(cells.solvers), len(cells.environments)
        self.solvers, self.environments = solvers, environments
        codes, self.of_cell = np.unique(cells.solver * environments + cells.environment,
                                        return_inverse=True)
        self.count = len(codes)
        self.solver, self.environment = codes // environments, codes % environments
        # Every ordered couple of pairs on the same environment: the terms of B·D⁻¹·Bᵀ.
        order = np.argsort(self.environment, kind="stable")
        grouped = self.environment[order]
        starts = np.searchsorted(grouped, grouped, side="left")
        sizes = np.searchsorted(grouped, grouped, side="right") - starts
        left = np.repeat(np.arange(self.count), sizes)
        offset = np.arange(len(left)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        self.left, self.right = order[left], order[starts[left] + offset]
        self.couple_environment = self.environment[self.left]
        self.couple_target = self.solver[self.left] * solvers + self.solver[self.right]

    def values(self, per_cell: np.ndarray) -> np.ndarray:
        return _sum_by(self.of_cell, per_cell, self.count)

    def to_solvers(self, per_pair: np.ndarray, per_environment: np.ndarray) -> np.ndarray:
        """B·v: sum over each solver's pairs of the pair value times its environment's v."""
        return _sum_by(self.solver, per_pair * per_environment[..., self.environment],
                       self.solvers)

    def to_environments(self, per_pair: np.ndarray, per_solver: np.ndarray) -> np.ndarray:
        """Bᵀ·v: sum over each environment's pairs of the pair value times its solver's v."""
        return _sum_by(self.environment, per_pair * per_solver[..., self.solver],
                       self.environments)

    def quadratic(self, first: np.ndarray, middle: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Σ_j first_j·middle_j·second_jᵀ over environments: a solvers × solvers matrix (per
        row of a batch)."""
        terms = (first[..., self.left] * middle[..., self.couple_environment]
                 * second[..., self.right])
        return _sum_by(self.couple_target, terms, self.solvers**2).reshape(
            *terms.shape[:-1], self.solvers, self.solvers)

    def per_environment(self, first: np.ndarray, solver_matrix: np.ndarray,
                        second: np.ndarray) -> np.ndarray:
        """For each environment j: first_jᵀ·M·second_j, with first_j, second_j its pair values."""
        terms = first[self.left] * solver_matrix[self.solver[self.left],
                                                 self.solver[self.right]] * second[self.right]
        return np.bincount(self.couple_environment, weights=terms, minlength=self.environments)


@dataclass
class IrtParameters:
    """Raw (not yet centred) estimates: θ per solver, b and γ per environment (a row of each per
    problem of a batch)."""

    theta: np.ndarray
    difficulty: np.ndarray
    hint_effect: np.ndarray

    def copy(self) -> IrtParameters:
        return IrtParameters(self.theta.copy(), self.difficulty.copy(), self.hint_effect.copy())

    def rows(self, index: np.ndarray | slice) -> IrtParameters:
        return IrtParameters(self.theta[index], self.difficulty[index], self.hint_effect[index])

    def centred(self) -> IrtParameters:
        """θ − mean θ and b − mean θ: the reported scale (mean ability 0)."""
        shift = (self.theta.mean(axis=-1, keepdims=True) if self.theta.shape[-1] else 0.0)
        return IrtParameters(self.theta - shift, self.difficulty - shift, self.hint_effect.copy())


@dataclass(frozen=True)
class IrtFit:
    parameters: IrtParameters
    iterations: int
    log_likelihood: float  # of the data (Bernoulli per episode), without the priors


class IrtProblem:
    """One fit's data: cells, optional per-cell counts (folds) and per-environment weights.

    `environment_weight[j]` multiplies environment j's cells and prior: drawing an environment
    twice in a bootstrap resample counts its data, and its own prior, twice. Counts or weights
    with a leading axis make a batch of problems, one per row (see `irt_fit_batch`).
    """

    def __init__(self, cells: IrtCells, *, successes: np.ndarray | None = None,
                 trials: np.ndarray | None = None,
                 environment_weight: np.ndarray | None = None, pairs: _Pairs | None = None):
        self.cells = cells
        self.pairs = pairs or _Pairs(cells)
        successes = cells.successes if successes is None else successes
        trials = cells.trials if trials is None else trials
        weight = (np.ones(len(cells.environments)) if environment_weight is None
                  else environment_weight)
        per_cell = weight[..., cells.environment]
        self.successes = successes * per_cell
        self.trials = trials * per_cell
        # An environment left out of a resample keeps its prior only, so it stays at 0.
        prior_weight = np.where(weight > 0, weight, 1.0)
        self.prior_ability = 1 / PRIOR_SD_ABILITY**2
        self.prior_difficulty = prior_weight / PRIOR_SD_DIFFICULTY**2
        self.prior_hint = prior_weight / PRIOR_SD_HINT**2

    @property
    def rows_count(self) -> int | None:
        """How many problems this batch holds; None for a single problem."""
        return self.trials.shape[0] if self.trials.ndim == 2 else None

    def rows(self, index: np.ndarray) -> IrtProblem:
        """The batch's problems in `index` (a batch too)."""
        def take(values: np.ndarray) -> np.ndarray:
            return values[index] if values.ndim == 2 else values

        return self._with(take(self.successes), take(self.trials), take(self.prior_difficulty),
                          take(self.prior_hint))

    def stacked(self) -> IrtProblem:
        """A single problem as a batch of one."""
        return self._with(self.successes[None], self.trials[None], self.prior_difficulty[None],
                          self.prior_hint[None])

    def _with(self, successes: np.ndarray, trials: np.ndarray, prior_difficulty: np.ndarray,
              prior_hint: np.ndarray) -> IrtProblem:
        other = object.__new__(IrtProblem)
        other.cells, other.pairs, other.prior_ability = self.cells, self.pairs, self.prior_ability
        other.successes, other.trials = successes, trials
        other.prior_difficulty, other.prior_hint = prior_difficulty, prior_hint
        return other

    def logits(self, x: IrtParameters) -> np.ndarray:
        c = self.cells
        return (x.theta[..., c.solver] - x.difficulty[..., c.environment]
                + c.hinted * x.hint_effect[..., c.environment])

    def log_likelihood(self, x: IrtParameters) -> float | np.ndarray:
        """The data's log-likelihood (one value per row of a batch)."""
        eta = self.logits(x)
        # s·log σ(η) + (n − s)·log σ(−η), using log σ(−η) = log σ(η) − η.
        return np.sum(self.trials * log_expit(eta) - (self.trials - self.successes) * eta,
                      axis=-1)

    def log_posterior(self, x: IrtParameters) -> float | np.ndarray:
        return self.log_likelihood(x) - 0.5 * (
            self.prior_ability * np.sum(x.theta**2, axis=-1)
            + np.sum(self.prior_difficulty * x.difficulty**2, axis=-1)
            + np.sum(self.prior_hint * x.hint_effect**2, axis=-1)
        )

    def curvature(self, x: IrtParameters) -> _Curvature:
        """Gradient of the log posterior and the pieces of its negative Hessian."""
        c = self.cells
        solvers, environments = len(c.solvers), len(c.environments)
        p = expit(self.logits(x))
        residual = self.successes - self.trials * p
        weight = self.trials * p * (1 - p)
        hinted_weight = c.hinted * weight
        env_weight = _sum_by(c.environment, weight, environments)
        env_hinted = _sum_by(c.environment, hinted_weight, environments)
        return _Curvature(
            grad_theta=_sum_by(c.solver, residual, solvers) - self.prior_ability * x.theta,
            grad_difficulty=-_sum_by(c.environment, residual, environments)
            - self.prior_difficulty * x.difficulty,
            grad_hint=_sum_by(c.environment, c.hinted * residual, environments)
            - self.prior_hint * x.hint_effect,
            ability=_sum_by(c.solver, weight, solvers) + self.prior_ability,
            d_bb=env_weight + self.prior_difficulty,
            d_bg=-env_hinted,
            d_gg=env_hinted + self.prior_hint,
            cross_b=self.pairs.values(-weight),
            cross_g=self.pairs.values(hinted_weight),
            pairs=self.pairs,
        )


@dataclass
class _Curvature:
    grad_theta: np.ndarray
    grad_difficulty: np.ndarray
    grad_hint: np.ndarray
    ability: np.ndarray  # diagonal of the θθ block
    d_bb: np.ndarray  # the 2×2 (b_j, γ_j) blocks
    d_bg: np.ndarray
    d_gg: np.ndarray
    cross_b: np.ndarray  # θ × b block, one value per (solver, environment) pair
    cross_g: np.ndarray  # θ × γ block
    pairs: _Pairs

    def inverse_blocks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Entries (q11, q12, q22) of each environment's inverted 2×2 block."""
        determinant = self.d_bb * self.d_gg - self.d_bg**2
        return self.d_gg / determinant, -self.d_bg / determinant, self.d_bb / determinant

    def schur(self, q11: np.ndarray, q12: np.ndarray, q22: np.ndarray) -> np.ndarray:
        """The θθ block minus B D⁻¹ Bᵀ: the abilities' precision with b and γ profiled out."""
        b, g, pairs = self.cross_b, self.cross_g, self.pairs
        mixed = pairs.quadratic(b, q12, g)
        reduction = (pairs.quadratic(b, q11, b) + mixed + np.swapaxes(mixed, -1, -2)
                     + pairs.quadratic(g, q22, g))
        return _diagonal(self.ability) - reduction

    def newton_step(self) -> IrtParameters:
        q11, q12, q22 = self.inverse_blocks()
        schur = self.schur(q11, q12, q22)
        reduced_b = q11 * self.grad_difficulty + q12 * self.grad_hint
        reduced_g = q12 * self.grad_difficulty + q22 * self.grad_hint
        pairs = self.pairs
        rhs = (self.grad_theta - pairs.to_solvers(self.cross_b, reduced_b)
               - pairs.to_solvers(self.cross_g, reduced_g))
        d_theta = np.linalg.solve(schur, rhs[..., None])[..., 0] if rhs.shape[-1] else rhs
        rest_b = self.grad_difficulty - pairs.to_environments(self.cross_b, d_theta)
        rest_g = self.grad_hint - pairs.to_environments(self.cross_g, d_theta)
        return IrtParameters(d_theta, q11 * rest_b + q12 * rest_g, q12 * rest_b + q22 * rest_g)


