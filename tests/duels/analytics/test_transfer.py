from __future__ import annotations

import numpy as np
import pytest

from duels.analytics.data import EnvironmentRecord, EpisodeRecord, TransferRecord
from duels.analytics.transfer import partial_spearman, transfer_fit, transfer_points


def planted(gains: list[int], improvement) -> tuple[list, list, list]:
    """Environment k: the learner passes 0 of 4 unhinted and gains[k] of 4 hinted."""
    environments, episodes, transfers = [], [], []
    for k, hinted_passes in enumerate(gains):
        uuid = f"env-{k}"
        environments.append(EnvironmentRecord(uuid, "t", "setter", True, "x = 1"))
        for seed in range(4):
            episodes.append(EpisodeRecord(1, uuid, "learner", False, seed, False))
            episodes.append(EpisodeRecord(1, uuid, "learner", True, seed, seed < hinted_passes))
        transfers.append(TransferRecord("learner", uuid, None, "bench", 0.2,
                                        0.2 + improvement(hinted_passes / 4)))
    return environments, episodes, transfers


def test_planted_monotone_transfer_gives_spearman_one():
    environments, episodes, transfers = planted([0, 1, 2, 3, 4], lambda g: g**3 + 0.01)
    rows = transfer_points(transfers=transfers, episodes=episodes, environments=environments)
    assert [row["hint_gain"] for row in rows] == [0, 0.25, 0.5, 0.75, 1.0]
    result = transfer_fit(rows=rows)
    assert result["spearman"] == pytest.approx(1.0)
    assert result["n"] == 5
    assert result["low"] <= 1.0 <= result["high"] + 1e-9


def test_author_rows_pool_that_authors_environments_and_unmatched_rows_drop():
    environments, episodes, transfers = planted([1, 3], lambda g: g)
    transfers = [TransferRecord("learner", None, "setter", "bench", 0.0, 0.5),
                 TransferRecord("someone-else", "env-0", None, "bench", 0.0, 0.5)]
    rows = transfer_points(transfers=transfers, episodes=episodes, environments=environments)
    assert len(rows) == 1
    assert rows[0]["hint_gain"] == pytest.approx(0.5)
    assert transfer_fit(rows=rows) is None


def test_partial_correlation_removes_a_shared_driver():
    baseline = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    gain = np.array([2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0, 8.0])
    improvement = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0, 8.0, 7.0])
    rows = [{"hint_gain": g, "improvement": i, "baseline": b}
            for g, i, b in zip(gain, improvement, baseline, strict=True)]
    raw = transfer_fit(rows=rows)
    assert raw["spearman"] > 0.8
    assert abs(raw["partial"]) < 0.5
    assert raw["partial"] == pytest.approx(partial_spearman(gain, improvement, baseline))
