"""How a resample of environments is drawn: stratified by author (`resampling_strata`) and
weighted as Rao and Wu do (`rescaled_bootstrap_weights`)."""

from __future__ import annotations

import numpy as np


def _stratum_sizes(strata: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The environments in stratum order, and each one's stratum start and size in that order."""
    order = np.argsort(strata, kind="stable")
    grouped = strata[order]
    starts = np.searchsorted(grouped, grouped, side="left")
    return order, starts, np.searchsorted(grouped, grouped, side="right") - starts


def resampling_strata(authors: np.ndarray) -> np.ndarray:
    """Strata for the bootstrap: one per author of two or more environments, and one pooled
    stratum for authors of a single environment and environments without a known author."""
    _, counts = np.unique(authors, return_counts=True)
    size_of = dict(zip(np.unique(authors).tolist(), counts.tolist(), strict=True))
    sizes = np.array([size_of[a] for a in authors.tolist()], dtype=np.int64)
    return np.where((sizes >= 2) & (authors >= 0), authors, -1)


def rescaled_bootstrap_weights(rng: np.random.Generator, strata: np.ndarray,
                               resamples: int) -> np.ndarray:
    """Rao–Wu weights, one row per resample: n − 1 draws with replacement in each stratum of n,
    each worth n/(n − 1).

    A stratum of one keeps its weight 1: it has no spread of its own to show.
    """
    order, starts, sizes = _stratum_sizes(strata)
    position = np.arange(len(order)) - starts
    picks = order[starts + np.floor(rng.random((resamples, len(order))) * sizes).astype(np.int64)]
    drawn = picks[:, (sizes >= 2) & (position < sizes - 1)]
    flat = (drawn + len(strata) * np.arange(resamples)[:, None]).ravel()
    weight = np.bincount(flat, minlength=resamples * len(strata)).reshape(
        resamples, len(strata)).astype(np.float64)
    stratum_size = np.empty(len(strata), dtype=np.int64)
    stratum_size[order] = sizes
    single = stratum_size < 2
    weight *= np.where(single, 1.0, stratum_size / np.maximum(stratum_size - 1, 1))
    weight[:, single] = 1.0
    return weight
