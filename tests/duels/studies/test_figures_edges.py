"""Edge cases of the study's figures: a model that wrote nothing, a domain with one version,
an evaluated solver, missing plays, ties, bad input, and the head-to-head rows as games."""

from __future__ import annotations

import json
from itertools import product

import numpy as np
import pytest

from duels.analytics.ratings import ratings_fit
from duels.analytics.transitivity import transitivity_fit
from duels.studies.figures import FieldModel, FieldPlay, FieldVersion, field_figures
from duels.studies.figures_head_to_head import head_to_head_games
from tests.duels.studies.test_figures_planted import planted_study


def version(uuid, author, domain="grid", *, revision=0, parent=None, final=True):
    slot = f"{author}/{uuid}"
    return FieldVersion(uuid=uuid, id=slot, version=uuid, slot=slot, revision=revision,
                        parent=parent, author=author, domain=domain, final=final)


def plays_of(uuid, solver, unhinted, hinted, seeds=(0, 1, 2, 3)):
    """Plays of `uuid` by `solver`: `unhinted` / `hinted` are strings of 1/0 per seed, or None
    for no play in that condition (a "-" in the string skips that seed)."""
    rows = []
    for outcomes, is_hinted in ((unhinted, False), (hinted, True)):
        for seed, mark in zip(seeds, outcomes or "", strict=False):
            if mark != "-":
                rows.append(FieldPlay(version=uuid, solver=solver, seed=seed, hinted=is_hinted,
                                      success=mark == "1"))
    return rows


def by_name(figures):
    return {row["model"]: row for row in figures["models"]}


def small_field():
    """Three authors a, b, c with two versions each over two domains; d wrote nothing."""
    versions = [version(f"{author}{i}", author, ("grid", "words")[i])
                for author in "abc" for i in range(2)]
    strength = {"a": "1100", "b": "1110", "c": "1000", "d": "1111"}
    plays = [p for v in versions for solver in "abcd"
             for p in plays_of(v.uuid, solver, strength[solver], "1111")]
    return versions, plays, [FieldModel(name) for name in "abcd"]


def test_a_model_that_wrote_nothing_has_no_design_and_no_design_rank():
    versions, plays, models = small_field()
    figures = field_figures(versions=versions, plays=plays, models=models, resamples=50)
    d = by_name(figures)["d"]
    assert d["environments_authored"] == 0
    assert d["design"] is None and d["design_rank"] is None and d["hint_authoring"] is None
    assert d["intervals"]["design"] is None
    assert d["canonical_autonomous_solve"] == 1.0 and d["canonical_rank"] == 1
    assert {row["design_rank"] for row in figures["models"]} == {1, 2, 3, None}
    assert "d" not in {name for row in figures["head_to_head"] for name in (row["a"], row["b"])}
    json.dumps(figures, allow_nan=False)


def test_a_domain_with_one_version_counts_as_a_whole_domain():
    versions, plays, models = small_field()
    lone = version("lone", "a", "cards")
    versions.append(lone)
    plays += [p for solver in "abcd" for p in plays_of("lone", solver, "0000", "1111")]
    # b passes every seed of c's versions, 3 of 4 of a's, none of the lone version's.
    plays = [p for p in plays if not (p.solver == "b" and p.version in ("c0", "c1"))]
    plays += [p for uuid in ("c0", "c1") for p in plays_of(uuid, "b", "1111", "1111")]
    figures = field_figures(versions=versions, plays=plays, models=models, resamples=50)
    b = by_name(figures)["b"]
    assert b["canonical_domain_scores"] == {"cards": 0.0, "grid": 0.875, "words": 0.875}
    assert b["canonical_autonomous_solve"] == pytest.approx((0 + 0.875 + 0.875) / 3)
    assert b["intervals"]["canonical_autonomous_solve"] is not None
    lone_row = next(row for row in figures["environments"] if row["uuid"] == "lone")
    assert lone_row["peer_discrimination"] == 0.0  # every peer failed every seed
    assert by_name(figures)["a"]["design_domain_scores"]["cards"] == 0.0


def test_an_evaluated_solver_is_never_a_peer_but_is_ranked():
    versions, plays, models = small_field()
    base = field_figures(versions=versions, plays=plays, models=models, intervals=False)
    # The new model passes seeds 0 and 2 only: it would change every peer figure if it counted.
    extra = [p for v in versions for p in plays_of(v.uuid, "new", "1010", "0000")]
    figures = field_figures(versions=versions, plays=plays + extra,
                            models=[*models, FieldModel("new", evaluated=True)],
                            new_solver="new", intervals=False)
    for before, after in zip(base["environments"], figures["environments"], strict=True):
        for key in ("peer_discrimination", "peer_hint_effect", "p_unhinted", "setter_score",
                    "peers"):
            assert before[key] == after[key], key
    new = by_name(figures)["new"]
    assert new["canonical_autonomous_solve"] == 0.5 and new["design_rank"] is None
    assert new["hint_gain"] == -0.5 and new["hint_gain_delta_vs_solver"] == 0.0
    # Every other model's hint gain against the new solver's.
    for name, row in by_name(figures).items():
        if name != "new":
            assert row["hint_gain_delta_vs_solver"] == pytest.approx(row["hint_gain"] + 0.5)
    assert "new" not in {n for row in figures["head_to_head"] for n in (row["a"], row["b"])}


def test_missing_plays_leave_the_common_panel_and_skip_incomplete_seeds():
    versions, plays, models = small_field()
    # d never played a0 unhinted; c missed seed 3 of b1 unhinted.
    plays = [p for p in plays if not (p.version == "a0" and p.solver == "d" and not p.hinted)
             and not (p.version == "b1" and p.solver == "c" and not p.hinted and p.seed == 3)]
    figures = field_figures(versions=versions, plays=plays, models=models, intervals=False)
    assert "a0" not in figures["common_environments"]
    assert figures["common_environments"] == ["a1", "b0", "b1", "c0", "c1"]
    rows = {row["uuid"]: row for row in figures["environments"]}
    # a0's peers are b, c, d and d played no seed unhinted: no seed is complete.
    assert rows["a0"]["peer_discrimination"] is None and rows["a0"]["discrimination_seeds"] == 0
    # b1's peers a, c, d: seed 3 is incomplete and skipped; seeds 0–2 count.
    assert rows["b1"]["discrimination_seeds"] == 3
    # Seed 0: a, c, d all passed (0); seeds 1 and 2: one failed, two passed or the other way
    # round: |1 − 0| twice, over ⌊9/4⌋ = 2.
    assert rows["b1"]["peer_discrimination"] == pytest.approx((0 + 2 / 2 + 2 / 2) / 3)
    d = by_name(figures)["d"]
    assert d["direct_common_panel_environment_count"] == 5
    assert d["hint_matched_pairs"] == 5 * 4  # a0 had no unhinted plays to pair
    pair = next(row for row in figures["pairs"] if row["version"] == "a0" and row["solver"] == "d")
    assert pair["without_hint"] == {"successes": 0, "attempted": 0, "accuracy": None}
    assert pair["matched_pairs"] == 0 and pair["hint_gain"] is None


def test_ties_are_ranked_by_name_even_through_floating_point_sums():
    # x and y pass shares that are equal as numbers but summed from different parts.
    versions = [version(f"e{i}", author, domain) for i, (author, domain) in
                enumerate(product("pq", ("grid", "words", "cards")))]
    patterns = {"x": ["1000", "1100", "0110", "1000", "1100", "0110"],
                "y": ["0110", "1000", "1100", "0110", "1000", "1100"]}
    plays = [p for name, rows in patterns.items() for v, pattern in zip(versions, rows,
                                                                       strict=True)
             for p in plays_of(v.uuid, name, pattern, "1111")]
    plays += [p for v in versions for name in "pq" for p in plays_of(v.uuid, name, "0000",
                                                                       "0000")]
    models = [FieldModel(name) for name in ("y", "x", "p", "q")]
    rows = by_name(field_figures(versions=versions, plays=plays, models=models,
                                 intervals=False))
    assert rows["x"]["canonical_autonomous_solve"] == pytest.approx(
        rows["y"]["canonical_autonomous_solve"])
    assert (rows["x"]["canonical_rank"], rows["y"]["canonical_rank"]) == (1, 2)
    assert (rows["p"]["canonical_rank"], rows["q"]["canonical_rank"]) == (3, 4)


def test_self_plays_count_only_in_the_direct_common_panel_solve():
    versions, plays, models = small_field()
    base = by_name(field_figures(versions=versions, plays=plays, models=models,
                                 intervals=False))
    flipped = [FieldPlay(p.version, p.solver, p.seed, p.hinted, True)
               if p.solver == "a" and p.version.startswith("a") else p for p in plays]
    rows = by_name(field_figures(versions=versions, plays=flipped, models=models,
                                 intervals=False))
    for key in ("canonical_autonomous_solve", "hint_gain", "hint_rescue", "hint_harm",
                "third_party", "design", "hint_authoring"):
        assert rows["a"][key] == base["a"][key], key
    assert rows["a"]["direct_common_panel_solve"] != base["a"]["direct_common_panel_solve"]
    assert rows["a"]["overall"] != base["a"]["overall"]  # the original's overall keeps them


def test_trials_on_one_seed_average_into_its_rate():
    versions = [version("v", "author")]
    plays = [FieldPlay("v", "s1", 0, False, True, trial=0),
             FieldPlay("v", "s1", 0, False, False, trial=1),
             FieldPlay("v", "s2", 0, False, True)]
    models = [FieldModel(n) for n in ("author", "s1", "s2")]
    [row] = field_figures(versions=versions, plays=plays, models=models,
                          intervals=False)["environments"]
    # Rates ½ and 1 on seed 0: |½ − 1| over ⌊4/4⌋.
    assert row["peer_discrimination"] == 0.5


def test_bad_input_is_an_error_a_person_can_act_on_and_strays_are_counted():
    versions, plays, models = small_field()
    with pytest.raises(ValueError, match="two unhinted plays of a/a0 by a on seed 0"):
        field_figures(versions=versions, plays=[*plays, plays[0]], models=models)
    with pytest.raises(ValueError, match="the new solver zed is not one of the field's"):
        field_figures(versions=versions, plays=plays, models=models, new_solver="zed")
    with pytest.raises(ValueError, match="listed twice"):
        field_figures(versions=[*versions, versions[0]], plays=plays, models=models)
    stray = [FieldPlay("gone", "a", 0, False, True), FieldPlay("a0", "stranger", 0, False, True)]
    figures = field_figures(versions=versions, plays=plays + stray, models=models,
                            intervals=False)
    assert figures["summary"]["plays_ignored"] == 2
    assert figures["summary"]["plays"] == len(plays)


def test_an_empty_field_has_no_figures_and_no_errors():
    figures = field_figures(versions=[], plays=[], models=[FieldModel("a")])
    [row] = figures["models"]
    assert row["canonical_autonomous_solve"] is None and row["canonical_rank"] is None
    assert figures["environments"] == figures["pairs"] == figures["head_to_head"] == []
    assert figures["hardening"] == [] and figures["hardening_first_to_final"] is None
    json.dumps(figures, allow_nan=False)


def test_intervals_are_seeded_and_parts_do_not_change_each_other():
    rows = planted_study(np.random.default_rng(0))
    one = field_figures(**rows, resamples=100)
    again = field_figures(**rows, resamples=100)
    other = field_figures(**rows, resamples=100, rng_seed=1)
    alone = field_figures(**rows, resamples=100, parts=("models",))
    assert one == again and alone["models"] == one["models"]
    assert alone["environments"] == [] and alone["pairs"] == []
    assert [r["intervals"] for r in other["models"]] != [r["intervals"] for r in one["models"]]
    with pytest.raises(ValueError, match="unknown parts"):
        field_figures(**rows, parts=("ranking",))


def test_head_to_head_rows_feed_the_duel_ratings_and_transitivity():
    versions, plays, models = small_field()
    figures = field_figures(versions=versions, plays=plays, models=models, intervals=False,
                            failed_slots={"c": 2})
    rows = {(row["a"], row["b"]): row for row in figures["head_to_head"]}
    assert set(rows) == {("a", "b"), ("a", "c"), ("b", "c")}
    # c's two versions as a played them (p_u = ½, p_h = 1: s = ½ each) and two failed slots.
    assert rows["a", "c"]["b_exact"] == "1/4" and rows["a", "c"]["b_environments"] == 4
    games = head_to_head_games(figures["head_to_head"])
    assert len(games) == 3 and all(points in (0.0, 0.5, 1.0) for _, _, points in games)
    fit = ratings_fit(players=["a", "b", "c"], games=games, resamples=20)
    assert fit.players == ["a", "b", "c"]
    assert transitivity_fit(fit.points, fit.boot_points)["decided_triples"] in (0, 1)
