"""Bradley–Terry fits of many resamples at once when few of the n × n pairs ever met.

`ratings.bt_fit_batch` holds a dense n × n points matrix and Hessian per resample: memory
resamples × n² and time resamples × n³, which is nothing for a dozen players and 2.9 GB and
minutes for a pairwise annotation queue of 600 designs in 600 pairs. The same model and prior
are fitted here on the list of pairs that met (E of them): each Newton step solves its system
(a weighted graph Laplacian plus the prior's diagonal, positive definite) by conjugate
gradients preconditioned with its diagonal, every product one pass over the E pairs, for all
resamples together. Memory is resamples × (n + E); the fits agree with the dense ones to the
tolerance below (tests/duels/analytics/test_ratings_sparse.py).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import expit

PRIOR_GAMES = 0.5  # as duels.analytics.ratings (which imports this module's fit)
TOLERANCE = 1e-8  # the largest Newton step (log-odds units; 1e-6 of a rating point) to stop at


def _incidence(ends: np.ndarray, size: int) -> sparse.csr_matrix:
    """(size × E): 1 where a pair has `ends` as that end."""
    return sparse.csr_matrix((np.ones(len(ends)), (ends, np.arange(len(ends)))),
                             shape=(size, len(ends)))


def bt_fit_edges(*, first: np.ndarray, second: np.ndarray, points: np.ndarray,
                 games: np.ndarray, size: int, start: np.ndarray,
                 iterations: int = 50) -> np.ndarray:
    """Strengths θ (batch × size) for a batch of resamples of E pairs.

    `first[e]`, `second[e]` are pair e's two players; `points[b, e]` the points the first
    scored against the second in resample b (draws half) and `games[b, e]` the games they
    played; `start` (size,) the warm start.
    """
    # Column-major batches: (E, batch) and (size, batch), so every gather takes whole rows
    # and every scatter is one sparse product.
    points, games = np.ascontiguousarray(points.T), np.ascontiguousarray(games.T)
    batch = points.shape[1]
    at_first, at_second = _incidence(first, size), _incidence(second, size)
    signed = (at_first - at_second).tocsr()
    both = (at_first + at_second).tocsr()
    theta = np.repeat(start[:, None], batch, axis=1)
    for _ in range(iterations):
        win = expit(theta[first] - theta[second])
        prior = expit(theta)
        gradient = signed @ (points - games * win) + PRIOR_GAMES * (1 - 2 * prior)
        weight = games * win * (1 - win)
        prior_curvature = 2 * PRIOR_GAMES * prior * (1 - prior)
        diagonal = both @ weight + prior_curvature

        def product(vector: np.ndarray, weight=weight, prior_curvature=prior_curvature):
            return signed @ (weight * (vector[first] - vector[second])) \
                + prior_curvature * vector

        step = np.clip(_conjugate_gradients(product, gradient, diagonal), -3.0, 3.0)
        theta += step
        if np.max(np.abs(step), initial=0.0) < TOLERANCE:
            break
    return theta.T


def _conjugate_gradients(product, right: np.ndarray, diagonal: np.ndarray, *,
                         iterations: int = 500) -> np.ndarray:
    """Solve A x = right for each column (A positive definite, given by `product`), with
    the diagonal as preconditioner, to a relative residual of 1e-9."""
    solution = np.zeros_like(right)
    residual = right.copy()
    preconditioned = residual / diagonal
    direction = preconditioned.copy()
    alignment = np.einsum("ij,ij->j", residual, preconditioned)
    goal = 1e-18 * np.maximum(np.einsum("ij,ij->j", right, right), 1e-300)
    for _ in range(iterations):
        if not (np.einsum("ij,ij->j", residual, residual) > goal).any():
            break
        mapped = product(direction)
        curvature = np.einsum("ij,ij->j", direction, mapped)
        length = np.divide(alignment, curvature, out=np.zeros_like(alignment),
                           where=curvature > 0)
        solution += length * direction
        residual -= length * mapped
        np.divide(residual, diagonal, out=preconditioned)
        new_alignment = np.einsum("ij,ij->j", residual, preconditioned)
        ratio = np.divide(new_alignment, alignment, out=np.zeros_like(alignment),
                          where=alignment > 0)
        direction *= ratio
        direction += preconditioned
        alignment = new_alignment
    return solution
