"""The original harness's result snapshot imports as outside outcomes of a panel, only when its
sources, seeds and hints equal the panel's; otherwise it is refused whole, naming the version."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from duels.models import OutcomeStatus, OutsideOutcome
from tests.duels.panels.handmade import (
    AUTHORS,
    SEEDS,
    env_id,
    outcome,
    write_export,
    write_snapshot,
)

pytestmark = pytest.mark.django_db

TARGET = "environments/gamma-405b/env_001/harden_01"


@pytest.fixture
def imported(sandboxed, tmp_path, capsys):
    write_export(tmp_path / "export")
    write_snapshot(tmp_path / "snapshot", tmp_path / "export")
    call_command("import", str(tmp_path / "export"), "--name", "original")
    capsys.readouterr()
    return tmp_path / "snapshot"


def test_the_snapshot_imports_every_outcome_and_keeps_incomplete_apart(imported, capsys):
    call_command("import", str(imported), "--panel", "original")
    assert "108 outside outcomes of 3 models on 6 versions" in capsys.readouterr().out
    stored = {(row.model, row.entry.entry_id, row.seed, row.hinted): row.status
              for row in OutsideOutcome.objects.select_related("entry")}
    for number in range(1, 7):
        entry_id = env_id(number)
        for model in range(3):
            for seed in SEEDS:
                for hinted in (False, True):
                    expected = outcome(model, number, seed, hinted)
                    status = {"success": OutcomeStatus.SUCCESS,
                              "failure": OutcomeStatus.FAILURE}.get(expected,
                                                                    OutcomeStatus.INCOMPLETE)
                    assert stored[(AUTHORS[model], entry_id, seed, hinted)] == status
    incomplete = OutsideOutcome.objects.get(status=OutcomeStatus.INCOMPLETE)
    assert incomplete.reported_status == "error" and not incomplete.decided
    # Again: nothing new, nothing doubled.
    call_command("import", str(imported), "--panel", "original")
    assert "0 outside outcomes" in capsys.readouterr().out
    assert OutsideOutcome.objects.count() == 108


def change_hint(root):
    path = root / TARGET / "run.json"
    report = json.loads(path.read_text())
    report["hint"] = report["hint"] + " (edited)"
    path.write_text(json.dumps(report))


def source_one_byte_off(root):
    path = root / TARGET / "env.py"
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))


def other_seeds(root):
    path = root / TARGET / "run.json"
    report = json.loads(path.read_text())
    report["seeds"] = [*SEEDS[:-1], 99]
    path.write_text(json.dumps(report))


@pytest.mark.parametrize(("breaker", "problem"), [
    (change_hint, "hint differs"), (source_one_byte_off, "env.py differs"),
    (other_seeds, "differ from the panel's benchmark seeds")], ids=["hint", "source", "seeds"])
def test_a_snapshot_that_differs_from_the_panel_is_refused_whole(imported, breaker, problem):
    breaker(imported)
    with pytest.raises(CommandError) as refused:
        call_command("import", str(imported), "--panel", "original")
    assert TARGET in str(refused.value) and problem in str(refused.value)
    assert "nothing was imported" in str(refused.value)
    assert not OutsideOutcome.objects.exists()


def test_a_snapshot_needs_a_panel_and_a_version_the_panel_has(imported, tmp_path):
    with pytest.raises(CommandError, match="add --panel P"):
        call_command("import", str(imported))
    matrix = json.loads((imported / "run.json").read_text())
    matrix["environments"][0]["path"] = "environments/delta/env_009"
    (imported / "run.json").write_text(json.dumps(matrix))
    with pytest.raises(CommandError, match="environments/delta/env_009: not on this panel"):
        call_command("import", str(imported), "--panel", "original")
    assert not OutsideOutcome.objects.exists()
