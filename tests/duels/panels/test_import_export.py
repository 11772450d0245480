"""An envduels-v1 export written by hand imports as a panel: every source's SHA-256 checked,
every class validated in the sandbox (one that reads the clock stored invalid with the reason),
and a bad file anywhere refuses the whole import, naming the entry, with nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from duels.models import (
    Contract,
    Environment,
    EnvironmentStatus,
    Hint,
    OutsideOutcome,
    Panel,
    PanelEntry,
    Player,
)
from tests.duels.panels.handmade import AUTHORS, SEEDS, hints_of, write_export

pytestmark = pytest.mark.django_db




def documented_manifest_hash(rows: list[dict], root) -> str:
    """The canonical manifest as docs/panels.md defines it, computed from the files."""
    environments = []
    for row in rows:
        seeds = json.loads((root / row["metadata"]).read_text())["benchmark_seeds"]
        hints = json.loads((root / row["privileged"]).read_text())["hints"]
        environments.append({"id": row["id"], "author": row["author"], "domain": row["domain"],
                             "split": row.get("split", ""),
                             "source_sha256": row["source_sha256"],
                             "class_name": row["class_name"], "max_turns": row["max_turns"],
                             "benchmark_seeds": seeds, "hints": hints})
    text = json.dumps({"format": "envduels-panel-1", "environments": environments},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def panel_show(reference: str, capsys) -> dict:
    capsys.readouterr()
    call_command("panel", "show", reference, "--json")
    return json.loads(capsys.readouterr().out)


def test_a_handmade_export_imports_as_a_panel_with_its_hash_seeds_and_graded_hints(
        sandboxed, tmp_path, capsys):
    rows = write_export(tmp_path / "export", extra_clock=True)
    call_command("import", str(tmp_path / "export"), "--name", "original")
    uuid = capsys.readouterr().out.strip()
    shown = panel_show("original", capsys)
    assert shown["panel"] == uuid and shown["name"] == "original"
    assert shown["manifest_sha256"] == documented_manifest_hash(rows, tmp_path / "export")
    assert [item["id"] for item in shown["environments"]] == [row["id"] for row in rows]
    for number, item in enumerate(shown["environments"][:6], start=1):
        assert item["author"] == AUTHORS[(number - 1) // 2]
        assert item["benchmark_seeds"] == list(SEEDS)
        assert item["hint_levels"] == ([1, 2] if "hint_1" in hints_of(number) else [1])
    # The panel is found by a prefix of its hash too, and its authors are players here.
    assert panel_show(shown["manifest_sha256"][:10], capsys)["panel"] == uuid
    assert set(Player.objects.filter(name__in=AUTHORS).values_list("imported", flat=True)) \
        == {True}
    graded = PanelEntry.objects.get(entry_id=rows[0]["id"])
    assert graded.hint_1.text == hints_of(1)["hint_1"] and graded.hint_2.level == 2
    assert graded.hint_2.text == hints_of(1)["hint_2"]
    # Each class is stored byte for byte and validated as it is played: through the adapter.
    for entry in PanelEntry.objects.filter(panel__uuid=uuid).select_related("environment"):
        environment = entry.environment
        assert hashlib.sha256(environment.source.encode()).hexdigest() == entry.source_sha256
        assert environment.contract == Contract.ENVDUELS_V1
        if entry.class_name != "Clocked":
            assert environment.status == EnvironmentStatus.VALID, environment.validation
            assert environment.max_steps == 6
    clocked = PanelEntry.objects.get(class_name="Clocked").environment
    assert clocked.status == EnvironmentStatus.INVALID
    deterministic = next(check for check in clocked.validation["checks"]
                         if check["name"] == "deterministic")
    assert not deterministic["passed"] and "time.time() reads the clock" in \
        deterministic["detail"]
    # Importing the same export again is a no-op: the same manifest is the same panel.
    call_command("import", str(tmp_path / "export"))
    assert capsys.readouterr().out.strip() == uuid
    assert Panel.objects.count() == 1 and Environment.objects.count() == 7


def test_the_adapter_plays_the_class_in_the_sandbox_with_boxed_actions(sandboxed, tmp_path):
    from sandbox_runner import open_sandbox

    write_export(tmp_path / "export")
    call_command("import", str(tmp_path / "export"))
    environment = PanelEntry.objects.get(class_name="Game1").environment
    with open_sandbox(environment.source, backend="auto",
                      adapter=environment.sandbox_adapter) as sandbox:
        assert sandbox.max_steps == 6
        assert sandbox.reset(seed=5).startswith("Find the number from 2 to 5")
        assert sandbox.step("2").observation == "higher"  # a bare action is boxed for it
        result = sandbox.step(r"\boxed{3}")
        assert (result.observation, result.done, result.success, result.reward) == \
            ("correct", True, True, 1.0)


def nothing_written() -> bool:
    return not (Panel.objects.exists() or PanelEntry.objects.exists()
                or Environment.objects.exists() or Hint.objects.exists()
                or OutsideOutcome.objects.exists() or Player.objects.exists())


def breakers():
    """Each bad file, with the entry and the problem the refusal must name."""
    target = "environments/beta-70b/env_002/harden_01"

    def rows_edit(root, change):
        manifest = json.loads((root / "manifest.json").read_text())
        row = next(row for row in manifest["environments"] if row["id"] == target)
        change(row, root)
        (root / "manifest.json").write_text(json.dumps(manifest))

    def missing_source(root):
        (root / target / "env.py").unlink()

    def hash_mismatch(root):
        path = root / target / "env.py"
        path.write_bytes(path.read_bytes() + b" ")

    def format_version(root):
        manifest = json.loads((root / "manifest.json").read_text())
        manifest["format_version"] = 2
        (root / "manifest.json").write_text(json.dumps(manifest))

    def seed_not_integer(root):
        (root / target / "metadata.json").write_text(json.dumps(
            {"benchmark_seeds": [11, "23", 37]}))

    def seed_float(root):
        (root / target / "metadata.json").write_text(json.dumps({"benchmark_seeds": [11, 2.5]}))

    def half_graded(root):
        (root / target / "privileged.json").write_text(json.dumps(
            {"environment_id": target, "hints": {"hint_1": "only the first"}}))

    def escapes(root):
        rows_edit(root, lambda row, _root: row.update(source="../outside.py"))

    return [
        (missing_source, target, "source"), (hash_mismatch, target, "does not match"),
        (format_version, "manifest.json", "unknown format_version 2"),
        (seed_not_integer, target, 'benchmark seed "23" is not an integer'),
        (seed_float, target, "benchmark seed 2.5 is not an integer"),
        (half_graded, target, "hint_1"), (escapes, target, "outside the folder"),
    ]


@pytest.mark.parametrize(("breaker", "entry", "problem"), breakers(),
                         ids=lambda value: getattr(value, "__name__", None))
def test_a_bad_file_anywhere_refuses_the_whole_import_naming_the_entry(
        tmp_path, breaker, entry, problem):
    write_export(tmp_path / "export")
    breaker(tmp_path / "export")
    with pytest.raises(CommandError) as refused:
        call_command("import", str(tmp_path / "export"))
    message = str(refused.value)
    assert entry in message and problem in message and "nothing was imported" in message
    assert nothing_written()


def test_a_missing_manifest_says_what_the_folder_is_not(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="no manifest.json"):
        call_command("import", str(tmp_path / "empty"))
    shutil.rmtree(tmp_path / "empty")
    assert nothing_written()


def test_a_class_that_breaks_the_v1_interface_is_stored_invalid_with_the_reason(
        sandboxed, tmp_path):
    write_export(tmp_path / "export")
    target = tmp_path / "export" / "environments/alpha-7b/env_001/harden_01/env.py"
    target.write_text(target.read_text().replace(
        '{"seed": seed})', '{"seed": seed})[0]'))  # reset returns the observation alone
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    manifest["environments"][0]["source_sha256"] = hashlib.sha256(
        target.read_bytes()).hexdigest()
    (tmp_path / "export" / "manifest.json").write_text(json.dumps(manifest))
    call_command("import", str(tmp_path / "export"))
    broken = PanelEntry.objects.get(class_name="Game1").environment
    assert broken.status == EnvironmentStatus.INVALID
    assert "reset(seed=) must return (observation, info)" in json.dumps(broken.validation)
    assert PanelEntry.objects.get(class_name="Game2").environment.is_valid
