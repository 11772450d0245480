"""A planted study: every figure field_figures shows equals the independent computation of
tests/duels/studies/reference.py, and the ranks come out in the planted order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.special import expit

from duels.studies.figures import FieldModel, FieldPlay, FieldVersion, field_figures
from tests.duels.studies.reference import (
    hardening_reference,
    head_to_head_reference,
    model_reference,
    version_reference,
)

PLAYERS = 6
PER_AUTHOR = 10
SEEDS = 8
# Solver n is stronger than solver n − 1; author n writes fewer sharp environments (split its
# peers near their middle) and more flat ones (every peer fails).
THETA = np.linspace(-2.5, 2.5, PLAYERS)
SHARP = [10, 8, 6, 4, 2, 1]


def name(i: int) -> str:
    return f"model-{i}"


def planted_study(rng: np.random.Generator) -> dict:
    versions, plays = [], []
    for author in range(PLAYERS):
        peers_centre = (THETA.sum() - THETA[author]) / (PLAYERS - 1)
        for j in range(PER_AUTHOR):
            slot = f"{name(author)}/env_{j + 1:03d}"
            domain = ("grid", "words")[j % 2]
            sharp = j < SHARP[author]
            base = peers_centre + rng.normal(0, 0.3) if sharp else 6.0
            hint = rng.normal(1.5, 0.5)
            seed_effect = rng.normal(0, 0.5, SEEDS)
            parent = None
            for revision in (0, 1):
                uuid = f"{author}-{j}-{revision}"
                versions.append(FieldVersion(
                    uuid=uuid, id=slot + ("/harden_01" if revision else ""),
                    version=slot.split("/")[1] + ("/harden_01" if revision else ""), slot=slot,
                    revision=revision, parent=parent, author=name(author), domain=domain,
                    final=revision == 1))
                parent = uuid
                difficulty = base + 0.6 * revision  # hardening makes it harder
                for solver in range(PLAYERS):
                    for seed in range(SEEDS):
                        for hinted in (False, True):
                            logit = 1.5 * (THETA[solver] - difficulty) + seed_effect[seed]
                            passed = rng.random() < expit(logit + hint * hinted)
                            plays.append(FieldPlay(version=uuid, solver=name(solver),
                                                   seed=1000 + seed, hinted=hinted,
                                                   success=bool(passed)))
    return {"versions": versions, "plays": plays,
            "models": [FieldModel(name(i)) for i in range(PLAYERS)]}


def approx(value):
    return None if value is None else pytest.approx(float(value), rel=1e-12, abs=1e-12)


@pytest.fixture(scope="module")
def study():
    rows = planted_study(np.random.default_rng(44))
    return rows, field_figures(**rows, new_solver=name(0), resamples=200)


def test_every_per_model_figure_is_the_definitions(study):
    rows, figures = study
    expected = model_reference(rows["versions"], rows["plays"], rows["models"],
                               new_solver=name(0))
    assert len(figures["models"]) == PLAYERS
    for row in figures["models"]:
        want = expected[row["model"]]
        for key, value in want.items():
            if isinstance(value, dict):
                assert row[key].keys() == value.keys(), key
                for inner, inner_value in value.items():
                    if isinstance(inner_value, dict):
                        assert row[key][inner] == {k: approx(v) if k == "accuracy" else v
                                                   for k, v in inner_value.items()}, key
                    else:
                        assert row[key][inner] == approx(inner_value), (key, inner)
            elif isinstance(value, float):
                assert row[key] == approx(value), (row["model"], key)
            else:
                assert row[key] == value, (row["model"], key)


def test_every_per_version_figure_is_the_definitions(study):
    rows, figures = study
    expected = version_reference(rows["versions"], rows["plays"], rows["models"])
    assert len(figures["environments"]) == len(rows["versions"]) == PLAYERS * PER_AUTHOR * 2
    for row in figures["environments"]:
        want = expected[row["uuid"]]
        for key in ("peer_discrimination", "peer_hint_effect", "p_unhinted", "p_hinted",
                    "setter_score"):
            assert row[key] == approx(want[key]), key
        for condition in ("without_hint", "with_hint"):
            assert {k: row[condition][k] for k in ("successes", "attempted")} == want[condition]
        assert row["peers"] == want["peers"] == PLAYERS - 1


def test_pairs_are_the_per_version_per_solver_tallies(study):
    rows, figures = study
    from tests.duels.studies.reference import condition, gain_rescue_harm, matched, records

    table = records(rows["plays"])
    assert len(figures["pairs"]) == len(rows["versions"]) * PLAYERS
    authors = {v.uuid: v.author for v in rows["versions"]}
    for row in figures["pairs"]:
        record = table[row["version"], row["solver"]]
        assert row["self"] == (authors[row["version"]] == row["solver"])
        for condition_name, hinted in (("without_hint", False), ("with_hint", True)):
            want = condition(record, hinted)
            assert row[condition_name]["successes"] == want["successes"]
            assert row[condition_name]["attempted"] == want["attempted"] == SEEDS
            assert row[condition_name]["accuracy"] == approx(want["accuracy"])
        pairs = matched(record)
        assert row["matched_pairs"] == len(pairs)
        gain, rescue, harm = gain_rescue_harm(pairs)
        assert (row["hint_gain"], row["hint_rescue"], row["hint_harm"]) == (
            approx(gain), approx(rescue), approx(harm))


def test_head_to_head_is_scored_exactly_from_the_field(study):
    rows, figures = study
    expected = head_to_head_reference(rows["versions"], rows["plays"], rows["models"])
    assert len(figures["head_to_head"]) == PLAYERS * (PLAYERS - 1) // 2
    for row, want in zip(figures["head_to_head"], expected, strict=True):
        assert (row["a"], row["b"], row["outcome"]) == (want["a"], want["b"], want["outcome"])
        assert Fraction(row["a_exact"]) == want["a_score"]
        assert Fraction(row["b_exact"]) == want["b_score"]
        assert row["a_score"] == float(want["a_score"])


def test_hardening_rows_are_the_definitions(study):
    rows, figures = study
    expected = hardening_reference(rows["versions"], rows["plays"], rows["models"])
    [row] = figures["hardening"]
    assert row["revision"] == 1 and row["slots"] == PLAYERS * PER_AUTHOR
    for key, value in expected[1].items():
        assert row[key] == approx(value), key
    # The planted revisions are harder: the unhinted pass rate fell, and its interval says so.
    assert row["p_unhinted_change"] < 0
    low, high = row["intervals"]["p_unhinted_change"]
    assert low <= row["p_unhinted_change"] <= high < 0
    # With one round, first to final is that round: the same figures and the same intervals,
    # so the page's headline and its table agree to the digit.
    overall = figures["hardening_first_to_final"]
    for key in ("p_unhinted_change", "setter_score_change", "peer_discrimination_change"):
        assert overall[key] == approx(row[key])
        assert overall["intervals"][key] == row["intervals"][key], key


def test_ranks_follow_the_planted_order(study):
    _, figures = study
    by_model = {row["model"]: row for row in figures["models"]}
    canonical = [by_model[name(i)]["canonical_rank"] for i in range(PLAYERS)]
    design = [by_model[name(i)]["design_rank"] for i in range(PLAYERS)]
    assert canonical == list(range(PLAYERS, 0, -1))  # the strongest solver first
    assert design == list(range(1, PLAYERS + 1))  # the most sharp environments first


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_planted_order_holds_in_other_draws_too(seed):
    figures = field_figures(**planted_study(np.random.default_rng(seed)), intervals=False)
    by_model = {row["model"]: row for row in figures["models"]}
    assert [by_model[name(i)]["canonical_rank"] for i in range(PLAYERS)] == list(
        range(PLAYERS, 0, -1))
    assert [by_model[name(i)]["design_rank"] for i in range(PLAYERS)] == list(
        range(1, PLAYERS + 1))


def test_intervals_hold_their_estimates(study):
    _, figures = study
    for row in figures["models"]:
        for key, interval in row["intervals"].items():
            if key == "hint_gain_delta_vs_solver" and row["model"] == name(0):
                # The new solver against itself: 0 by definition, with no spread.
                assert row[key] == 0 and interval is None
                continue
            scope, _, condition = key.partition("_with")
            value = (row[scope]["with" + condition]["accuracy"]
                     if scope in ("overall", "third_party") else row[key])
            if value is None:  # a figure without data has no interval either
                assert interval is None
                continue
            assert interval is not None, (row["model"], key)
            low, high = interval
            assert low <= value <= high, (row["model"], key)
