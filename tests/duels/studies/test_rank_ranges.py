"""Ranks that do not pretend and the study's answer, held to their definitions in docs/results.md
("Ranks and rank ranges", "The study's answer"), computed again here with plain loops."""

from __future__ import annotations

import random

import numpy as np
import pytest

from duels.studies.figures import field_figures
from duels.studies.figures_ranks import rank_ranges, shared_ranks
from tests.duels.studies.reference import model_reference
from tests.duels.studies.test_figures_planted import planted_study
from tests.helpers.planted_field import field_rows, planted_truth, simulate_field
from tests.helpers.planted_ranks import rank_range_simulation

RANKED = ("canonical_autonomous_solve", "direct_common_panel_solve", "design")


def reference_ranges(values, intervals):
    """The documented rule, plainly: best = 1 + models significantly ahead, worst = models
    with the figure − models significantly behind, held around the shared rank, then the widest
    range among equal figures."""
    defined = [i for i, v in enumerate(values) if v is not None]
    spans = {i: intervals[i] or (0.0, 1.0) for i in defined}
    out = {}
    for i in defined:
        ahead = [j for j in defined if j != i and spans[j][0] > spans[i][1]]
        behind = [j for j in defined if j != i and spans[j][1] < spans[i][0]]
        higher = [j for j in defined if round(values[j], 9) > round(values[i], 9)]
        equal = [j for j in defined if round(values[j], 9) == round(values[i], 9)]
        out[i] = [min(1 + len(ahead), 1 + len(higher)),
                  max(len(defined) - len(behind), len(higher) + len(equal))]
    result = [None] * len(values)
    for i in defined:
        equal = [j for j in defined if round(values[j], 9) == round(values[i], 9)]
        result[i] = [min(out[j][0] for j in equal), max(out[j][1] for j in equal)]
    return result


def generated_rows(rng: random.Random):
    size = rng.randint(1, 8)
    levels = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]) for _ in range(3)]
    values = [None if rng.random() < 0.15 else rng.choice(levels) for _ in range(size)]
    intervals = []
    for value in values:
        if value is None or rng.random() < 0.1:
            intervals.append(None)
            continue
        half = rng.choice([0.0, 0.05, 0.1, 0.3, 0.6])
        intervals.append([max(0.0, value - half), min(1.0, value + half)])
    return values, intervals


def test_shared_ranks_and_rank_ranges_follow_the_rule_on_generated_figures():
    rng = random.Random(53)
    for _ in range(2000):
        values, intervals = generated_rows(rng)
        ranks = shared_ranks(values)
        ranges = rank_ranges(values, intervals)
        assert ranges == reference_ranges(values, intervals), (values, intervals)
        for i, value in enumerate(values):
            if value is None:
                assert ranks[i] is None and ranges[i] is None
                continue
            assert ranks[i] == 1 + sum(v is not None and v > value for v in values)
            assert ranges[i][0] <= ranks[i] <= ranges[i][1]
            for j, other in enumerate(values):
                if other == value:  # equal figures: one rank, one range
                    assert ranks[j] == ranks[i] and ranges[j] == ranges[i]


def test_a_figure_ahead_of_every_interval_is_settled_first():
    values = [0.9, 0.5, 0.5, 0.1]
    intervals = [[0.85, 0.95], [0.4, 0.6], [0.45, 0.55], [0.0, 0.2]]
    assert shared_ranks(values) == [1, 2, 2, 4]
    assert rank_ranges(values, intervals) == [[1, 1], [2, 3], [2, 3], [4, 4]]


@pytest.fixture(scope="module")
def planted():
    rows = planted_study(np.random.default_rng(44))
    return rows, field_figures(**rows, resamples=200, keep_draws=True)


def test_every_figure_shown_has_an_interval(planted):
    _, figures = planted
    rows = list(figures["models"])
    # A small field too: one version per author (no spread to resample anywhere).
    truth = planted_truth(players=3, domains=1)
    small = field_rows(truth, simulate_field(truth, np.random.default_rng(3), per_author=1,
                                             seeds=2))
    rows += field_figures(**small, resamples=50)["models"]
    # And what hardening changed, where every slot changed alike (no spread over slots).
    hardened = field_rows(truth, simulate_field(truth, np.random.default_rng(4), per_author=1,
                                                seeds=2, harden_rounds=1, harden_shift=9.0))
    hardening = field_figures(**hardened, resamples=50)
    for change in [*hardening["hardening"], hardening["hardening_first_to_final"]]:
        for key, bounds in change["intervals"].items():
            if change.get(key) is not None:
                assert bounds is not None, key
    for row in rows:
        for name, bounds in row["intervals"].items():
            if row.get(name) is not None:
                assert bounds is not None, (row["model"], name)
                assert bounds[0] <= row[name] + 1e-9 and row[name] - 1e-9 <= bounds[1]


def test_the_headline_names_the_primary_figures_leaders(planted):
    rows, figures = planted
    expected = model_reference(rows["versions"], rows["plays"], rows["models"])
    headline = figures["headline"]
    for role, figure in (("best_solver", "canonical_autonomous_solve"),
                         ("best_setter", "design")):
        top = max(row[figure] for row in expected.values() if row[figure] is not None)
        leaders = sorted(name for name, row in expected.items()
                         if row[figure] is not None and abs(row[figure] - top) < 1e-12)
        best = headline[role]
        assert [best["model"], *best["tied_with"]] == leaders
        assert best["figure"] == figure
        assert best["value"] == pytest.approx(top)
        model_row = next(row for row in figures["models"] if row["model"] == leaders[0])
        assert best["interval"] == model_row["intervals"][figure]
        assert best["rank_range"] == model_row["rank_ranges"][figure]


def independent_different_share(draws: dict, names: list[str]) -> float | None:
    """Resample r: the models with the highest canonical solve and those with the highest
    design (12 significant digits); different when no model is in both."""
    different = counted = 0
    for solvers, setters in zip(draws["canonical_autonomous_solve"], draws["design"],
                                strict=True):
        def leaders(values):
            finite = {names[m]: float(f"{v:.12g}") for m, v in enumerate(values)
                      if v is not None and np.isfinite(v)}
            top = max(finite.values(), default=None)
            return {name for name, v in finite.items() if v == top}

        first, second = leaders(solvers), leaders(setters)
        if first and second:
            counted += 1
            different += not (first & second)
    return different / counted if counted else None


def test_the_different_share_and_the_sentence_come_from_the_same_numbers(planted):
    rows, figures = planted
    headline = figures["headline"]
    names = [model.name for model in rows["models"]]
    share = independent_different_share(figures["draws"], names)
    assert headline["different_share"] == pytest.approx(share)
    sentence = headline["sentence"]
    for role in ("best_solver", "best_setter"):
        best = headline[role]
        low, high = best["interval"]
        assert f"{best['model']} " in sentence
        assert f"{best['value']:.2f} [{low:.2f}, {high:.2f}]" in sentence
        first, last = best["rank_range"]
        assert (f"rank {first}" if first == last else f"rank {first}–{last}") in sentence
    assert f"in {share:.0%} of resamples" in sentence
    assert headline["missing"] is None


def test_an_unplayed_field_says_what_is_missing():
    truth = planted_truth(players=2, domains=1)
    rows = field_rows(truth, simulate_field(truth, np.random.default_rng(1), per_author=1,
                                            seeds=1))
    rows["plays"] = []
    headline = field_figures(**rows, resamples=20)["headline"]
    assert headline["best_solver"] is None and headline["best_setter"] is None
    assert headline["different_share"] is None
    assert "plays" in headline["missing"]
    assert "players: design compares an author's peers" in headline["missing"]
    assert headline["sentence"].startswith("No figure can be computed yet")


def test_equal_figures_share_a_rank_in_every_row(planted):
    _, figures = planted
    for figure in RANKED:
        by_value: dict = {}
        for row in figures["models"]:
            if row[figure] is not None:
                by_value.setdefault(round(row[figure], 12), set()).add(
                    (row["shared_ranks"][figure], tuple(row["rank_ranges"][figure])))
        assert all(len(ranks) == 1 for ranks in by_value.values())


@pytest.mark.slow
def test_200_planted_studies_equal_players_share_and_separated_players_part():
    result = rank_range_simulation(studies=200, per_author=12, seeds=8, resamples=200)
    for figure, share in result["equal_share"].items():
        assert share >= 0.95, (figure, result)
    separated = result["separated_share"]
    assert separated["canonical_autonomous_solve"]["p0-p5"] >= 0.9, result
    assert separated["canonical_autonomous_solve"]["p3-p5"] >= 0.9, result
    assert separated["design"]["p0-p5"] >= 0.9, result
