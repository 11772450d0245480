"""The panel's ranking: the imported models (outside outcomes, no transcript) and a built-in
player evaluated here with k = 2, every figure equal to an independent computation from the
definitions (tests/duels/panels/definitions.py), each with its interval."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from duels.models import Episode, Panel
from tests.docs.documented import documented_json, key_paths
from tests.duels.panels.definitions import ranking
from tests.duels.panels.handmade import AUTHORS, SEEDS, env_id, outcome
from tests.duels.panels.test_evaluate import PLAYER

pytestmark = pytest.mark.django_db(transaction=True)

FIGURES = ("canonical_autonomous_solve", "direct_common_panel_solve", "hint_gain",
           "hint_rescue", "hint_harm", "design", "hint_authoring", "hint_gain_delta_vs_solver",
           "canonical_rank", "direct_common_panel_rank", "design_rank")


def expected_ranking(panel: Panel) -> dict:
    entries = {entry.entry_id: entry for entry in panel.entries.select_related("environment")
               if entry.environment.status == "valid"}
    versions = {entry.entry_id: (entry.author, entry.domain) for entry in entries.values()}
    plays = []
    for number in range(1, 7):
        for model in range(3):
            for seed in SEEDS:
                for hinted in (False, True):
                    status = outcome(model, number, seed, hinted)
                    if status in ("success", "failure"):
                        plays.append((env_id(number), AUTHORS[model], seed, hinted,
                                      status == "success"))
    by_environment = {entry.environment_id: entry.entry_id for entry in entries.values()}
    for episode in Episode.objects.filter(evaluation__panel=panel):
        plays.append((by_environment[episode.environment_id], PLAYER, episode.seed,
                      episode.condition == "hinted", bool(episode.success)))
    return ranking(plays=plays, versions=versions, models=[*AUTHORS, PLAYER],
                   evaluated={PLAYER}, new_solver=PLAYER)


def test_the_ranking_equals_the_definitions_for_imported_and_evaluated_models(original):
    call_command("evaluate", "--panel", "original", "--player", PLAYER,
                 "--seeds-per-environment", "2", "--wait", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("analytics", "--panel", "original", "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert set(printed) == {"headline", "roles", "models", "environments"}
    shown = documented_json("json-outputs.md", "`manage.py analytics --panel P --json`")

    def paths(data):  # the per-domain scores are keyed by the panel's own domains
        return {path for path in key_paths(data) if "domain_scores." not in path}

    assert paths(printed) == paths(shown)
    rows = {row["model"]: row for row in printed["models"]}
    assert set(rows) == {*AUTHORS, PLAYER}
    assert [rows[name]["imported"] for name in (*AUTHORS, PLAYER)] == [True, True, True, False]
    expected = expected_ranking(original)
    for model, figures in expected.items():
        for name in FIGURES:
            assert rows[model][name] == pytest.approx(figures[name], abs=1e-9), (model, name)
    # The new solver authored nothing: no design, no design rank; its delta is 0 by definition.
    assert rows[PLAYER]["design"] is None and rows[PLAYER]["design_rank"] is None
    assert rows[PLAYER]["hint_gain_delta_vs_solver"] == pytest.approx(0.0)
    # Intervals beside the figures (null where a field this small leaves no spread to
    # resample), each around its figure.
    given = 0
    for row in printed["models"]:
        for name, bounds in row["intervals"].items():
            if bounds is not None and row.get(name) is not None:
                given += 1
                assert bounds[0] - 1e-9 <= row[name] <= bounds[1] + 1e-9, (row["model"], name)
    assert given >= 4 * 5
    assert {row["id"] for row in printed["environments"]} == {env_id(n) for n in range(1, 7)}
    text = StringIO()
    call_command("analytics", "--panel", "original", stdout=text)
    assert "* imported outcomes, no transcript" in text.getvalue()
