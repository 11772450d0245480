"""The fit on the pairs that met gives the dense fit's strengths, resample by resample."""

from __future__ import annotations

import numpy as np

from duels.analytics.ratings import bt_fit_batch, points_matrix
from duels.analytics.ratings_sparse import bt_fit_edges


def test_the_edge_fit_agrees_with_the_dense_fit():
    rng = np.random.default_rng(3)
    size, batch = 30, 5
    first = rng.integers(0, size, 80)
    second = (first + rng.integers(1, size, 80)) % size
    games = rng.integers(1, 6, (batch, 80)).astype(float)
    points = np.floor(games * rng.random((batch, 80)) * 2) / 2
    dense = np.stack([points_matrix(np.stack([first, second], axis=1), points[b] / games[b],
                                    size, weights=games[b]) for b in range(batch)])
    expected = bt_fit_batch(dense, np.zeros(size))
    found = bt_fit_edges(first=first, second=second, points=points, games=games, size=size,
                         start=np.zeros(size))
    assert np.max(np.abs(found - expected)) < 1e-6
