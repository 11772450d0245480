"""`manage.py analytics --study UUID --json`: the study's figures in the shape
docs/json-outputs.md shows, with the original's names; the joint model fitted on the field's
plays; head-to-head results feeding ratings, transitivity and findings."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from duels.models import Study
from duels.studies.results import study_figures_refresh
from tests.docs.documented import documented_json, key_paths
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def _analytics(*args) -> str:
    out = StringIO()
    call_command("analytics", *args, stdout=out)
    return out.getvalue()


def test_the_json_is_the_documented_shape():
    study = played_study()
    data = json.loads(_analytics("--study", str(study.uuid), "--json"))
    assert set(data) == {"headline", "roles", "models", "environments", "head_to_head"}
    shown = documented_json("json-outputs.md", "`manage.py analytics --study UUID --json`")
    assert key_paths(data) == key_paths(shown)
    assert {row["model"] for row in data["models"]} == {"alpha", "beta", "gamma"}
    assert {row["version"] for row in data["environments"]} == {"env_001", "env_001/harden_01"}
    # Three players: three pairs, each decided or drawn by the duel rule.
    assert len(data["head_to_head"]) == 3
    assert {row["outcome"] for row in data["head_to_head"]} <= {"a", "b", "draw"}
    # The stored figures answer the next call (the data has not changed).
    computed = Study.objects.get(pk=study.pk).figures_computed_at
    _analytics("--study", str(study.uuid), "--json")
    assert Study.objects.get(pk=study.pk).figures_computed_at == computed


def test_the_text_summary_and_an_unknown_study():
    study = played_study()
    text = _analytics("--study", str(study.uuid))
    assert "canonical solve" in text and "hardening, first to final version" in text
    with pytest.raises(CommandError, match="no study has uuid"):
        _analytics("--study", "00000000-0000-0000-0000-000000000000")
    with pytest.raises(CommandError, match="is not a study's uuid"):
        _analytics("--study", "nope")


def test_the_joint_model_ratings_and_findings_come_from_the_field():
    # alpha's versions are passed by nobody unhinted and by everyone hinted; beta's and
    # gamma's by everyone in both conditions: alpha's environments need their hints.
    study = played_study(harden=False, results=lambda author, revision, solver, seed, hinted:
                         hinted or author != "alpha")
    figures = study_figures_refresh(study=study, resamples=50)
    extra = figures["analytics"]
    assert extra["irt"] is not None
    environments = {row["uuid"]: row for row in extra["irt"]["environments"]}
    assert len(environments) == 3  # every version of the field is an item of the joint model
    # alpha beats beta and gamma head to head (setter score 1 against 0); the ratings say so.
    by_pair = {(row["a"], row["b"]): row for row in figures["head_to_head"]}
    assert by_pair[("alpha", "beta")]["outcome"] == "a"
    ratings = {row["player"]: row["rating"] for row in extra["ratings"]}
    assert ratings["alpha"] > ratings["beta"] and ratings["alpha"] > ratings["gamma"]
    assert [finding["id"] for finding in extra["findings"]] == [
        "solver_not_setter", "small_models_set_harder", "transitive", "designs_converge",
        "gain_predicts_transfer"]
