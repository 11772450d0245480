"""Fitting the joint model (duels/analytics/irt.py): Newton's method on the penalised
likelihood, in batches of bootstrap weights, and the Laplace approximation of its uncertainty."""

from __future__ import annotations

import numpy as np

from duels.analytics.irt import IrtCells, IrtFit, IrtParameters, IrtProblem


def irt_start(cells: IrtCells) -> IrtParameters:
    return IrtParameters(np.zeros(len(cells.solvers)), np.zeros(len(cells.environments)),
                         np.zeros(len(cells.environments)))


def _newton(problem: IrtProblem, x: IrtParameters, *, tolerance: float,
            max_iterations: int) -> tuple[IrtParameters, np.ndarray]:
    """Damped Newton steps (the posterior is concave) on each row of a batch until its step is
    below `tolerance`; return the estimates and each row's iterations. A row that is done
    takes no further step, so it ends exactly where it would have ended alone."""
    x = x.copy()
    value = problem.log_posterior(x)
    iterations = np.zeros(len(value), dtype=np.int64)
    active = np.arange(len(value))
    for iteration in range(1, max_iterations + 1):
        if not len(active):
            break
        current = x.rows(active)
        step = problem.rows(active).curvature(current).newton_step()
        size = np.maximum(np.max(np.abs(step.theta), axis=-1, initial=0.0), np.maximum(
            np.max(np.abs(step.difficulty), axis=-1, initial=0.0),
            np.max(np.abs(step.hint_effect), axis=-1, initial=0.0)))
        scale = np.ones(len(active))
        # Backtracking: halve a row's step until its posterior does not fall.
        searching = np.arange(len(active))
        while len(searching):
            rows = active[searching]
            factor = scale[searching][:, None]
            trial = IrtParameters(current.theta[searching] + factor * step.theta[searching],
                                  current.difficulty[searching]
                                  + factor * step.difficulty[searching],
                                  current.hint_effect[searching]
                                  + factor * step.hint_effect[searching])
            trial_value = problem.rows(rows).log_posterior(trial)
            accept = ((trial_value >= value[rows] - 1e-9 * np.abs(value[rows]))
                      | (scale[searching] < 1e-6))
            done = rows[accept]
            x.theta[done] = trial.theta[accept]
            x.difficulty[done] = trial.difficulty[accept]
            x.hint_effect[done] = trial.hint_effect[accept]
            value[done] = trial_value[accept]
            scale[searching[~accept]] /= 2
            searching = searching[~accept]
        iterations[active] = iteration
        active = active[~(size * scale < tolerance)]
    return x, iterations


def irt_fit(problem: IrtProblem, *, start: IrtParameters | None = None,
            tolerance: float = 1e-7, max_iterations: int = 100) -> IrtFit:
    """The maximum a posteriori estimates by damped Newton steps (the posterior is concave)."""
    start = start or irt_start(problem.cells)
    x, iterations = _newton(problem.stacked(),
                            IrtParameters(start.theta[None], start.difficulty[None],
                                          start.hint_effect[None]),
                            tolerance=tolerance, max_iterations=max_iterations)
    x = x.rows(0)
    return IrtFit(parameters=x, iterations=int(iterations[0]),
                  log_likelihood=float(problem.log_likelihood(x)))


def irt_fit_batch(problem: IrtProblem, *, start: IrtParameters, tolerance: float = 1e-7,
                  max_iterations: int = 100) -> IrtParameters:
    """Every row of a batch problem fitted from the same start; one row of estimates each."""
    rows = problem.rows_count
    x = IrtParameters(*(np.tile(values, (rows, 1)) for values in
                        (start.theta, start.difficulty, start.hint_effect)))
    return _newton(problem, x, tolerance=tolerance, max_iterations=max_iterations)[0]


def irt_laplace(problem: IrtProblem, x: IrtParameters) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors of centred b (b − mean θ) and of γ from the inverse Hessian at `x`."""
    curvature = problem.curvature(x)
    q11, q12, q22 = curvature.inverse_blocks()
    solvers = len(x.theta)
    if solvers == 0:
        return np.sqrt(q11), np.sqrt(q22)
    ability_cov = np.linalg.inv(curvature.schur(q11, q12, q22))
    pairs, b, g = curvature.pairs, curvature.cross_b, curvature.cross_g
    # Environment j's row of D⁻¹Bᵀ for b_j (m_b) and γ_j (m_g), one value per pair: how the
    # estimate moves with the abilities it is measured against.
    m_b = b * q11[pairs.environment] + g * q12[pairs.environment]
    m_g = b * q12[pairs.environment] + g * q22[pairs.environment]
    var_b = q11 + pairs.per_environment(m_b, ability_cov, m_b)
    var_g = q22 + pairs.per_environment(m_g, ability_cov, m_g)
    # Centring: Var(b − θ̄) = Var(b) − 2 Cov(b, θ̄) + Var(θ̄), with Cov(θ, b_j) = −Σ m_bjᵀ.
    mean_weights = np.full(solvers, 1 / solvers)
    towards_mean = ability_cov @ mean_weights
    var_centred = (var_b + 2 * pairs.to_environments(m_b, towards_mean)
                   + mean_weights @ towards_mean)
    return np.sqrt(np.maximum(var_centred, 0)), np.sqrt(np.maximum(var_g, 0))
