"""Hostile result snapshots (`manage.py import DIR --panel P`) and transfer CSVs: links and
special files, traversal in paths, oversized files, and outside outcomes under the name of a
player evaluated on the panel. Each is refused whole with nothing changed; a ranking never
crashes on outside outcomes stored under an evaluated player's name before the check."""

from __future__ import annotations

import json
import os

import pytest
from django.core.management import CommandError, call_command

from duels.models import Condition, Episode, Evaluation, OutsideOutcome, Player, Status
from duels.panels.ranking import panel_ranking_compute
from tests.duels.exchange.hostile.inputs import (
    TRAVERSALS,
    database_state,
    fifo_watchdog,
    folder_state,
    stored_panel,
)
from tests.duels.panels.handmade import SEEDS, write_snapshot

pytestmark = pytest.mark.django_db

TARGET = "environments/gamma-405b/env_001/harden_01"


@pytest.fixture
def snapshot(tmp_path):
    """(the stored panel, its snapshot folder)."""
    panel = stored_panel(tmp_path / "export", name="original")
    write_snapshot(tmp_path / "snapshot", tmp_path / "export")
    return panel, tmp_path / "snapshot"


def refused_whole(root, *names, panel="original", fifo=None):
    before, files = database_state(), folder_state(root.parent)
    with fifo_watchdog(fifo or root / "none"), pytest.raises(CommandError) as refusal:
        call_command("import", str(root), "--panel", panel)
    message = str(refusal.value)
    for name in names:
        assert name in message, message
    assert "nothing was imported" in message
    assert database_state() == before and folder_state(root.parent) == files
    return message


def test_the_genuine_snapshot_imports(snapshot, capsys):
    panel, root = snapshot
    call_command("import", str(root), "--panel", "original")
    assert "108 outside outcomes of 3 models on 6 versions" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "kind"), [
    ("run.json", "dev-zero"), (f"{TARGET}/run.json", "dev-zero"), (f"{TARGET}/env.py", "fifo"),
    ("run.json", "fifo"), (f"{TARGET}/run.json", "file outside")])
def test_links_and_special_files_in_a_snapshot_are_refused_at_once(snapshot, name, kind):
    """Finding 9: the root and per-version run.json are read like every other file."""
    _, root = snapshot
    path = root / name
    data = path.read_bytes()
    path.unlink()
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        (root.parent / "elsewhere.json").write_bytes(data)
        path.symlink_to(root.parent / "elsewhere.json")
    message = refused_whole(root, "run.json" if name == "run.json" else TARGET, fifo=path)
    assert "symbolic link" in message or "not a plain file" in message


@pytest.mark.parametrize("hostile", [value for value in TRAVERSALS if value])
def test_traversal_in_a_snapshot_path_is_refused(snapshot, hostile):
    _, root = snapshot
    matrix = json.loads((root / "run.json").read_text())
    matrix["environments"][0]["path"] = hostile
    (root / "run.json").write_text(json.dumps(matrix))
    refused_whole(root, "not on this panel")


def test_an_oversized_version_run_json_is_refused(snapshot):
    _, root = snapshot
    path = root / TARGET / "run.json"
    report = json.loads(path.read_text())
    report["padding"] = "x" * (1024 * 1024)
    path.write_text(json.dumps(report))
    refused_whole(root, TARGET, "1,048,576 bytes")


def evaluated(panel, name="alpha-7b"):
    """An evaluation of the author `name` on `panel` with one decided play per seed and
    condition on the panel's first version."""
    player = Player.objects.get(name=name)
    evaluation = Evaluation.objects.create(panel=panel, player=player)
    entry = panel.entries.order_by("position").first()
    for seed in SEEDS:
        for condition in (Condition.UNHINTED, Condition.HINTED):
            Episode.objects.create(
                evaluation=evaluation, environment=entry.environment, solver=player, seed=seed,
                condition=condition, status=Status.FINISHED, success=True,
                hint=entry.hint_1 if condition == Condition.HINTED else None)
    return evaluation


def test_a_snapshot_naming_an_evaluated_player_is_refused(snapshot):
    """Finding 6: `manage.py import DIR --panel P` knows who was evaluated on P."""
    panel, root = snapshot
    evaluated(panel)
    refused_whole(root, "alpha-7b", "was evaluated here")


def test_a_ranking_leaves_out_outside_outcomes_under_an_evaluated_name(snapshot):
    """Outcomes stored before the check existed: the ranking refresh still works, the
    evaluated player's own plays are its result."""
    panel, root = snapshot
    call_command("import", str(root), "--panel", "original")
    evaluated(panel)
    assert OutsideOutcome.objects.filter(model="alpha-7b").exists()
    ranking = panel_ranking_compute(panel=panel, resamples=20)
    rows = {row["model"]: row for row in ranking["models"]}
    assert rows["alpha-7b"]["imported"] is False and rows["beta-70b"]["imported"] is True
    assert ranking["counts"]["plays"] == 6 + sum(  # its 6 own plays, no outcome of its name
        1 for row in OutsideOutcome.objects.exclude(model="alpha-7b") if row.decided)


@pytest.mark.parametrize("kind", ["fifo", "symlink", "dev-zero", "oversized"])
def test_a_transfer_csv_that_is_a_special_file_or_too_large_is_refused(tmp_path, kind):
    real = tmp_path / "real.csv"
    real.write_text("learner,environment,author,benchmark,before,after\n")
    path = tmp_path / "results.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        path.symlink_to(real)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_bytes(real.read_bytes() + b"#" * (17 * 1024 * 1024))
    before = database_state()
    with fifo_watchdog(path), pytest.raises(CommandError) as refusal:
        call_command("import_transfer", str(path))
    assert str(path) in str(refusal.value)
    assert any(words in str(refusal.value) for words in (
        "symbolic link", "not a plain file", "at most 16,777,216 bytes"))
    assert database_state() == before
