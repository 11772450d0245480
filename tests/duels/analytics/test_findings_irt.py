"""Findings 1 and 2 rest on the joint model's Solve and Author ratings when there are any."""

from __future__ import annotations

from duels.analytics.findings import finding_small_models_set_harder, finding_solver_not_setter


def _result(*, irt_divergence: dict | None, duel_divergence: dict | None) -> dict:
    irt = None
    if irt_divergence is not None:
        irt = {"divergence": irt_divergence, "fit": {"resamples": 200},
               "solvers": [], "authors": [], "environments": []}
    return {"irt": irt, "divergence": duel_divergence, "summary": {"resamples": 1000}}


def test_solver_not_setter_compares_solve_and_author_ratings():
    result = _result(
        irt_divergence={"kendall_tau": -0.4, "low": -0.8, "high": 0.1, "p_top_differs": 0.97,
                        "players": 5},
        duel_divergence={"kendall_tau": 0.9, "low": 0.5, "high": 1.0, "p_top_differs": 0.02,
                         "players": 5},
    )
    finding = finding_solver_not_setter(result)
    assert finding["verdict"] == "supported"
    assert finding["figure"]["value"] == 0.97
    assert "Solve rating" in finding["figure"]["label"]
    assert "200 bootstrap resamples of environments" in finding["interval"]["method"]
    assert finding["correlation"] == {"kendall_tau": -0.4, "low": -0.8, "high": 0.1}


def test_solver_not_setter_falls_back_to_plain_strengths_without_the_joint_model():
    result = _result(irt_divergence=None, duel_divergence={
        "kendall_tau": 0.9, "low": 0.5, "high": 1.0, "p_top_differs": 0.02, "players": 4})
    finding = finding_solver_not_setter(result)
    assert finding["verdict"] == "contradicted"
    assert "whole duels" in finding["interval"]["method"]
    assert finding["correlation"]["kendall_tau"] == 0.9
    empty = finding_solver_not_setter(_result(irt_divergence=None, duel_divergence=None))
    assert empty["verdict"] == "not enough data" and empty["correlation"] is None


def test_small_models_finding_names_the_author_rating_when_it_is_used():
    result = _result(irt_divergence={"p_top_differs": 0.5, "players": 2}, duel_divergence=None)
    result["scale"] = {"setter_spearman": -0.9, "low": -1.0, "high": -0.4, "n": 6}
    finding = finding_small_models_set_harder(result)
    assert finding["verdict"] == "supported"
    assert finding["figure"]["label"].endswith("Author rating")
