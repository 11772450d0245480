"""`manage.py evaluate`: a built-in player plays every (version, seed, condition) of a panel it
has not played yet; evaluating again keeps what was played and plays again what was left
incomplete; invalid versions are never played; a panel evaluated on never changes."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from duels.models import (
    Condition,
    EndReason,
    Episode,
    Evaluation,
    OutsideOutcome,
    Panel,
    PanelEntry,
    PanelFrozen,
    Status,
)
from tests.docs.documented import documented_json, key_paths
from tests.duels.panels.handmade import SEEDS

pytestmark = pytest.mark.django_db(transaction=True)

PLAYER = "builtin-cautious"


def evaluate(*args: str) -> dict:
    out = StringIO()
    call_command("evaluate", "--panel", "original", "--player", PLAYER, *args, "--json",
                 stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def test_a_dry_run_counts_what_would_be_played_and_creates_nothing(original):
    printed = evaluate("--dry-run", "--seeds-per-environment", "2")
    # Six valid versions (the clock-reading one is never played) x 2 seeds x 2 conditions.
    assert printed == {"panel": str(original.uuid), "player": PLAYER, "played": 0,
                       "remaining": 24, "incomplete": 0}
    assert not Evaluation.objects.exists() and not Episode.objects.exists()
    shown = documented_json("json-outputs.md", "`manage.py evaluate … --json`")
    assert key_paths(printed) == key_paths(shown)


def test_evaluating_plays_each_case_once_and_again_plays_only_the_incomplete(original):
    printed = evaluate("--seeds-per-environment", "2", "--wait")
    assert printed == {"panel": str(original.uuid), "player": PLAYER, "played": 24,
                       "remaining": 0, "incomplete": 0}
    evaluation = Evaluation.objects.get()
    assert evaluation.status == Status.FINISHED
    plays = Episode.objects.filter(evaluation=evaluation)
    keys = [(p.environment.panel_entries.get().entry_id, p.seed, p.condition) for p in plays]
    assert len(keys) == len(set(keys)) == 24
    assert {seed for _, seed, _ in keys} == set(SEEDS[:2])
    assert not plays.filter(environment__status="invalid").exists()
    assert all(p.duel_id is None and p.study_id is None for p in plays)
    hinted = plays.filter(condition=Condition.HINTED).select_related("hint")
    assert all(p.hint.level == 1 for p in hinted)

    # One play left incomplete by an infrastructure fault: evaluating again plays it alone.
    again = plays.first()
    steps_before = again.steps
    Episode.objects.filter(pk=again.pk).update(status=Status.FAILED,
                                               end_reason=EndReason.INFRA_ERROR, success=None)
    assert evaluate("--seeds-per-environment", "2", "--dry-run")["incomplete"] == 1
    printed = evaluate("--seeds-per-environment", "2", "--wait")
    assert printed["played"] == 24 and printed["incomplete"] == 0
    assert Episode.objects.filter(evaluation=evaluation).count() == 24
    again.refresh_from_db()
    assert again.status == Status.FINISHED and again.steps >= steps_before

    # More seeds later: only the third seed's plays are new.
    printed = evaluate("--wait")
    assert printed["played"] == 36 and Episode.objects.filter(evaluation=evaluation).count() == 36


def test_a_panel_evaluated_on_never_changes(original):
    evaluate("--environments", "1", "--seeds-per-environment", "1", "--wait")
    panel = original
    entry = panel.entries.first()
    entry.domain = "other"
    with pytest.raises(PanelFrozen):
        entry.save()
    with pytest.raises(PanelFrozen):
        PanelEntry.objects.filter(panel=panel).update(domain="other")
    with pytest.raises(PanelFrozen):
        PanelEntry.objects.filter(panel=panel).delete()
    with pytest.raises(PanelFrozen):
        PanelEntry.objects.create(panel=panel, position=99, entry_id="new",
                                  environment=entry.environment, domain="x", class_source="",
                                  source_sha256="0" * 64, class_name="X", max_turns=5,
                                  benchmark_seeds=[1])
    panel.manifest_sha256 = "0" * 64
    with pytest.raises(PanelFrozen):
        panel.save()
    with pytest.raises(Exception, match="protected"):
        Panel.objects.filter(pk=panel.pk).delete()
    assert PanelEntry.objects.filter(panel=panel).count() == 7


def test_bad_inputs_are_refused_with_what_to_change(original):
    with pytest.raises(CommandError, match="--hint-level must be a whole number from 1 to 2"):
        evaluate("--hint-level", "3")
    with pytest.raises(CommandError, match="--seeds-per-environment must be"):
        evaluate("--seeds-per-environment", "0")
    with pytest.raises(CommandError, match="no panel 'nothing'"):
        call_command("evaluate", "--panel", "nothing", "--player", PLAYER)
    # A player whose name an imported model holds would merge with it in the ranking.
    OutsideOutcome.objects.filter(pk=OutsideOutcome.objects.first().pk).update(model=PLAYER)
    with pytest.raises(CommandError, match="already has imported outcomes"):
        evaluate()
