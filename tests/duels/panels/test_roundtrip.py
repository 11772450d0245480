"""A panel made here (from a study's final versions, or imported) leaves as an envduels-v1
export that the original harness's readers load, and a second, separately migrated installation
imports it as the same panel: the same manifest hash and the same source_sha256 everywhere."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from duels.models import Contract, Environment, PanelEntry, Study
from tests.duels.panels.handmade import write_export

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


class SecondInstallation:
    """Another EnvDuels installation: its own folder and database, migrated by `migrate`."""

    def __init__(self, folder: Path, backend: str) -> None:
        self.env = {**{key: value for key, value in os.environ.items()
                       if key not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}},
                    "ENVDUELS_VAR_DIR": str(folder), "ENVDUELS_SANDBOX": backend}
        self.run("migrate", "--noinput")

    def run(self, *arguments: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *arguments], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done.stdout


def spade_read(root: Path) -> dict[str, tuple[type, tuple[str, ...], dict]]:
    """Read an export the way the original's public consumer does: the manifest's version, each
    class from its file's checked bytes, each hint level from privileged.json."""
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["format_version"] == 1
    classes = {}
    for row in manifest["environments"]:
        code = (root / row["source"]).read_bytes()
        assert hashlib.sha256(code).hexdigest() == row["source_sha256"]
        name = "envduels_export_" + row["source_sha256"]
        spec = importlib.util.spec_from_file_location(name, root / row["source"])
        module = importlib.util.module_from_spec(spec)
        exec(compile(code, str(root / row["source"]), "exec"), module.__dict__)
        privileged = json.loads((root / row["privileged"]).read_text())
        assert privileged["environment_id"] == row["id"]
        hints = privileged["hints"]
        fields = ("hint",) if set(hints) == {"hint"} else ("hint_1", "hint_2")
        assert set(hints) == set(fields)
        seeds = json.loads((root / row["metadata"]).read_text())["benchmark_seeds"]
        assert seeds and all(type(seed) is int for seed in seeds)
        classes[row["id"]] = (getattr(module, row["class_name"]),
                              tuple(hints[key] for key in fields), row)
    return classes


def make_study(make) -> Study:
    """Two authors; each slot revised once, one revision invalid (its parent stays final)."""
    study = Study.objects.create(name="field", per_author=1, seeds=2, domains=["count"])
    for author_name in ("ada-8b", "bo-70b"):
        author = make.player(name=author_name)
        first = make.environment(author=author, study=study, slot="env_001", revision=0,
                                 domain="count", benchmark_seeds=[3, 5])
        second = make.environment(author=author, study=study, slot="env_001", revision=1,
                                  parent=first, domain="count", benchmark_seeds=[3, 5],
                                  status="invalid" if author_name == "bo-70b" else "valid")
        for version in (first, second):
            make.hint(environment=version, author=author, text=f"Say {author_name}'s number.")
        make.hint(environment=second, author=author, level=2, text="It is the seed mod 3.")
    return study


def test_a_study_panel_leaves_and_comes_back_as_the_same_panel(
        sandboxed, make, tmp_path, capsys, settings):
    study = make_study(make)
    call_command("panel", "create", "--study", str(study.uuid), "--name", "field panel")
    capsys.readouterr()
    entries = list(PanelEntry.objects.order_by("position"))
    assert [entry.entry_id for entry in entries] == [
        "environments/ada-8b/env_001/harden_01", "environments/bo-70b/env_001"]
    assert [entry.hint_levels for entry in entries] == [[1, 2], [1]]
    # The same versions, seeds and hints make the same panel.
    call_command("panel", "create", "--study", str(study.uuid), "--name", "again")
    assert "already" in capsys.readouterr().err
    call_command("export", "--format", "envduels-v1", "--panel", "field panel",
                 "--out", str(tmp_path / "out"))
    classes = spade_read(tmp_path / "out")
    cls, hints, row = classes["environments/ada-8b/env_001/harden_01"]
    assert hints == ("Say ada-8b's number.", "It is the seed mod 3.")
    env = cls(max_turns=row["max_turns"])
    observation, info = env.reset(seed=5)
    assert observation == "Say the number 2." and info["seed"] == 5
    assert env.step(r"\boxed{2}")[1:3] == (1.0, True)

    panel = entries[0].panel
    second = SecondInstallation(tmp_path / "second", settings.ENVDUELS_SANDBOX)
    uuid = second.run("import", str(tmp_path / "out")).strip()
    shown = json.loads(second.run("panel", "show", uuid, "--json"))
    assert shown["manifest_sha256"] == panel.manifest_sha256
    assert [item["benchmark_seeds"] for item in shown["environments"]] == [[3, 5], [3, 5]]
    second.run("export", "--format", "envduels-v1", "--panel", uuid,
               "--out", str(tmp_path / "again"))
    rows = {item["id"]: item for item in
            json.loads((tmp_path / "again" / "manifest.json").read_text())["environments"]}
    for entry in entries:
        assert rows[entry.entry_id]["source_sha256"] == entry.source_sha256
        # The second installation plays EnvDuels' own design, not the wrapper around it.
        assert rows[entry.entry_id]["content_hash"] == entry.environment.content_hash


def test_an_imported_panel_exports_its_classes_byte_for_byte(
        sandboxed, tmp_path, capsys, settings):
    rows = write_export(tmp_path / "original")
    call_command("import", str(tmp_path / "original"), "--name", "original")
    capsys.readouterr()
    call_command("export", "--format", "envduels-v1", "--panel", "original",
                 "--out", str(tmp_path / "out"))
    classes = spade_read(tmp_path / "out")
    for row in rows:
        assert classes[row["id"]][2]["source_sha256"] == row["source_sha256"]
        assert (tmp_path / "out" / classes[row["id"]][2]["source"]).read_bytes() == \
            (tmp_path / "original" / row["source"]).read_bytes()
    # Importing its own export is the same panel here too.
    call_command("import", str(tmp_path / "out"))
    assert Environment.objects.count() == 6
    assert set(Environment.objects.values_list("contract", flat=True)) == {Contract.ENVDUELS_V1}


def test_panel_commands_say_what_is_wrong(make, capsys):
    with pytest.raises(CommandError, match="no panel 'nothing'"):
        call_command("panel", "show", "nothing")
    with pytest.raises(CommandError, match="no study"):
        call_command("panel", "create", "--study", "not-a-uuid", "--name", "x")
    environment = make.environment(benchmark_seeds=None)
    with pytest.raises(CommandError, match="no benchmark seeds"):
        call_command("panel", "create", "--designs", environment.content_hash[:8],
                     "--name", "x")
    with pytest.raises(CommandError, match="at least 6 characters"):
        call_command("panel", "create", "--designs", "abc", "--name", "x")
    environment.benchmark_seeds = [0, 1]
    environment.save()
    make.hint(environment=environment)
    call_command("panel", "create", "--designs", environment.content_hash[:8], "--name", "one")
    capsys.readouterr()
    call_command("panel", "list")
    assert "one" in capsys.readouterr().out


def test_the_exchange_file_carries_panels_and_their_outcomes_to_another_installation(
        sandboxed, tmp_path, capsys, settings):
    from tests.duels.panels.handmade import write_snapshot

    write_export(tmp_path / "original")
    write_snapshot(tmp_path / "snapshot", tmp_path / "original")
    call_command("import", str(tmp_path / "original"), "--name", "original")
    call_command("import", str(tmp_path / "snapshot"), "--panel", "original")
    capsys.readouterr()
    call_command("export", "--out", str(tmp_path / "all.jsonl"))
    kinds = [json.loads(line).get("kind") for line in
             (tmp_path / "all.jsonl").read_text().splitlines()]
    assert kinds.count("panel") == 1 and kinds.count("panel_entry") == 6
    assert kinds.count("outside_outcome") == 108
    panel = PanelEntry.objects.first().panel
    second = SecondInstallation(tmp_path / "second", settings.ENVDUELS_SANDBOX)
    second.run("import", str(tmp_path / "all.jsonl"))
    shown = json.loads(second.run("panel", "show", panel.manifest_sha256[:12], "--json"))
    assert shown["panel"] == str(panel.uuid) and shown["manifest_sha256"] == \
        panel.manifest_sha256
    # A panel changed after export (one hint edited) is refused, naming its line.
    lines = (tmp_path / "all.jsonl").read_text().splitlines()
    edited = []
    for line in lines:
        record = json.loads(line)
        if record.get("kind") == "panel_entry" and record["hints"].get("hint"):
            record["hints"]["hint"] += " (edited)"
            line = json.dumps(record)
        edited.append(line)
    (tmp_path / "edited.jsonl").write_text("\n".join(edited) + "\n")
    third = SecondInstallation(tmp_path / "third", settings.ENVDUELS_SANDBOX)
    done = subprocess.run([sys.executable, "manage.py", "import", str(tmp_path / "edited.jsonl")],
                          cwd=ROOT, env=third.env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "do not give its manifest hash" in done.stderr
    assert json.loads(third.run("panel", "list").strip() or "[]") == []


def test_a_panel_exported_and_imported_elsewhere_ranks_the_same_outcomes_alike(
        sandboxed, tmp_path, capsys, settings):
    """One installation imports the hand-written export and its snapshot, exports the panel as
    envduels-v1; a second, separately migrated one imports that export and the same snapshot:
    the same manifest hash and the same ranking, figure for figure."""
    from io import StringIO

    from tests.duels.panels.handmade import write_snapshot

    write_export(tmp_path / "original")
    write_snapshot(tmp_path / "snapshot", tmp_path / "original")
    call_command("import", str(tmp_path / "original"), "--name", "original")
    call_command("import", str(tmp_path / "snapshot"), "--panel", "original")
    call_command("export", "--format", "envduels-v1", "--panel", "original",
                 "--out", str(tmp_path / "out"))
    capsys.readouterr()
    here = StringIO()
    call_command("analytics", "--panel", "original", "--json", stdout=here)
    here = json.loads(here.getvalue())
    panel = PanelEntry.objects.first().panel

    second = SecondInstallation(tmp_path / "second", settings.ENVDUELS_SANDBOX)
    uuid = second.run("import", str(tmp_path / "out")).strip()
    assert json.loads(second.run("panel", "show", uuid, "--json"))["manifest_sha256"] == \
        panel.manifest_sha256
    second.run("import", str(tmp_path / "snapshot"), "--panel", uuid)
    there = json.loads(second.run("analytics", "--panel", uuid, "--json"))
    assert there["models"] == here["models"] and len(here["models"]) == 3

    def without_uuids(rows):
        return [{key: value for key, value in row.items() if key != "uuid"} for row in rows]

    assert without_uuids(there["environments"]) == without_uuids(here["environments"])
