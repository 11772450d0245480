"""A study's field as arrays: each play's outcome by version, solver, seed (and trial), and the
tallies every figure is made of.

Pure: the rows come in as plain dataclasses (duels/studies/figures.py); nothing here touches the
database. Outcomes are int8: -1 where a play is absent, 0 failed, 1 passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ABSENT = -1


@dataclass(frozen=True)
class Field:
    """The plays of a field, indexed: versions (V) × solvers (S) × keys (K: seed and trial)."""

    versions: tuple  # FieldVersion, in input order
    models: tuple  # FieldModel, in input order
    unhinted: np.ndarray  # (V, S, K) int8
    hinted: np.ndarray  # (V, S, K) int8
    key_seed: np.ndarray  # (V, K) the seed column of each key; -1 where a version has fewer
    seed_count: np.ndarray  # (V,) how many seeds each version was played on
    plays: int  # plays counted
    ignored: int  # plays on versions or by solvers the field does not list

    @property
    def names(self) -> list[str]:
        return [model.name for model in self.models]

    def seed_onehot(self) -> np.ndarray:
        """(V, K, J): 1 where key k of version v is on its seed column j."""
        columns = max(1, int(self.seed_count.max(initial=0)))
        onehot = np.zeros((*self.key_seed.shape, columns))
        v, k = np.nonzero(self.key_seed >= 0)
        onehot[v, k, self.key_seed[v, k]] = 1.0
        return onehot


def field_build(*, versions: Sequence, plays: Sequence, models: Sequence) -> Field:
    """Index the plays; a play on a version or by a solver outside the field is ignored (and
    counted), two plays of one (version, solver, seed, trial, condition) are an error."""
    version_index = {}
    for i, version in enumerate(versions):
        if version.uuid in version_index:
            raise ValueError(f"version {version.id or version.uuid} is listed twice")
        version_index[version.uuid] = i
    solver_index = {}
    for i, model in enumerate(models):
        if model.name in solver_index:
            raise ValueError(f"model {model.name} is listed twice")
        solver_index[model.name] = i
    # One pass over the plays, then arrays: a study passes thousands.
    rows = [(version_index.get(play.version, -1), solver_index.get(play.solver, -1), play.seed,
             getattr(play, "trial", 0), bool(play.hinted), bool(play.success)) for play in plays]
    seed_values = sorted({row[2] for row in rows})
    seed_code = {seed: i for i, seed in enumerate(seed_values)}
    table = np.array([(v, s, seed_code[seed], trial, hinted, success)
                      for v, s, seed, trial, hinted, success in rows],
                     dtype=np.int64).reshape(-1, 6)
    kept_rows = (table[:, 0] >= 0) & (table[:, 1] >= 0)
    ignored = int((~kept_rows).sum())
    v, s, seed, trial, hinted, success = table[kept_rows].T
    # Each version's keys (seed, trial) and seeds in sorted order: a field's arrays do not
    # depend on the plays' order.
    keys, key_of = np.unique(np.stack([v, seed, trial]), axis=1, return_inverse=True)
    key_of = key_of.reshape(-1)
    key_start = np.searchsorted(keys[0], keys[0], side="left")
    key_column = np.arange(keys.shape[1]) - key_start
    seeds, seed_of_key = np.unique(keys[:2], axis=1, return_inverse=True)
    seed_start = np.searchsorted(seeds[0], seeds[0], side="left")
    seed_column = (np.arange(seeds.shape[1]) - seed_start)[seed_of_key.reshape(-1)]
    width = max(1, int(key_column.max(initial=-1)) + 1)
    key_seed = np.full((len(versions), width), -1, dtype=np.int64)
    key_seed[keys[0], key_column] = seed_column
    seed_count = np.bincount(seeds[0], minlength=len(versions)).astype(np.int64)
    shape = (len(versions), len(models), width)
    flat = ((v * shape[1] + s) * shape[2] + key_column[key_of]) * 2 + hinted
    unique, first, counts = np.unique(flat, return_index=True, return_counts=True)
    if len(unique) < len(flat):
        i = first[np.argmax(counts > 1)]
        version = versions[v[i]]
        raise ValueError(
            f"two {'hinted' if hinted[i] else 'unhinted'} plays of {version.id or version.uuid}"
            f" by {models[s[i]].name} on seed {seed_values[seed[i]]} (trial {trial[i]})")
    both = np.full((*shape, 2), ABSENT, dtype=np.int8)
    both.reshape(-1)[flat] = success.astype(np.int8)
    kept = flat
    return Field(
        versions=tuple(versions), models=tuple(models),
        unhinted=np.ascontiguousarray(both[..., 0]), hinted=np.ascontiguousarray(both[..., 1]),
        key_seed=key_seed, seed_count=seed_count, plays=len(kept), ignored=ignored)


@dataclass(frozen=True)
class Tallies:
    """Counts per version and solver (V, S), or per seed column (V, S, J) for `*_seed`."""

    unhinted_successes: np.ndarray
    unhinted_attempted: np.ndarray
    hinted_successes: np.ndarray
    hinted_attempted: np.ndarray
    matched_pairs: np.ndarray  # keys played in both conditions
    gain_sum: np.ndarray  # Σ (hinted − unhinted) over matched pairs
    rescue_num: np.ndarray  # matched pairs failed unhinted and passed hinted
    rescue_den: np.ndarray  # matched pairs failed unhinted
    harm_num: np.ndarray  # matched pairs passed unhinted and failed hinted
    harm_den: np.ndarray  # matched pairs passed unhinted
    seed: dict  # the same counts per seed column, name → (V, S, J)


def field_tallies(field: Field) -> Tallies:
    """Successes, attempts and matched-pair counts of every (version, solver)."""
    unhinted, hinted = field.unhinted, field.hinted
    paired = (unhinted >= 0) & (hinted >= 0)
    per_key = {
        "unhinted_successes": unhinted == 1,
        "unhinted_attempted": unhinted >= 0,
        "hinted_successes": hinted == 1,
        "hinted_attempted": hinted >= 0,
        "matched_pairs": paired,
        "gain_sum": np.where(paired, hinted.astype(np.int64) - unhinted, 0),
        "rescue_num": paired & (unhinted == 0) & (hinted == 1),
        "rescue_den": paired & (unhinted == 0),
        "harm_num": paired & (unhinted == 1) & (hinted == 0),
        "harm_den": paired & (unhinted == 1),
    }
    onehot = field.seed_onehot()
    totals = {name: values.sum(axis=-1).astype(np.int64) for name, values in per_key.items()}
    seed = {name: np.einsum("vsk,vkj->vsj", values.astype(float), onehot)
            for name, values in per_key.items()}
    return Tallies(**totals, seed=seed)


def ratio(numerator, denominator):
    """numerator / denominator elementwise, NaN where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


def peer_mask(field: Field) -> np.ndarray:
    """(V, S): the solvers whose plays of a version are peer plays: not its author, and not an
    evaluated player (the original's panel)."""
    authors = np.array([version.author or "" for version in field.versions], dtype=object)
    names = np.array(field.names, dtype=object)
    evaluated = np.array([model.evaluated for model in field.models], dtype=bool)
    if not len(authors) or not len(names):
        return np.zeros((len(authors), len(names)), dtype=bool)
    return (authors[:, None] != names[None, :]) & ~evaluated[None, :]


def own_mask(field: Field) -> np.ndarray:
    """(V, S): True where the solver wrote the version."""
    authors = np.array([version.author or "" for version in field.versions], dtype=object)
    names = np.array(field.names, dtype=object)
    if not len(authors) or not len(names):
        return np.zeros((len(authors), len(names)), dtype=bool)
    return authors[:, None] == names[None, :]
