"""Hostile envduels-v1 exports (`manage.py import DIR`): traversal in every id and path field,
links and special files, oversized and duplicated content, classes that only look generated.
Each is refused whole naming the entry, before any sandbox runs, with nothing changed."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from django.core.management import CommandError, call_command

from duels.models import content_hash
from duels.panels.imports import panel_import_preview
from duels.panels.v1_read import export_read
from duels.trainers.envduels_v1 import RUNTIME, design_class_file
from tests.duels.exchange.hostile.inputs import (
    LOOK_ALIKES,
    TRAVERSALS,
    database_state,
    fifo_watchdog,
    folder_state,
    stored_panel,
)
from tests.duels.panels.handmade import write_export

pytestmark = pytest.mark.django_db

TARGET = "environments/beta-70b/env_002/harden_01"
DESIGN = '''class Environment:
    max_steps = 5

    def reset(self, seed):
        self.secret = seed % 7
        return "Guess a number from 0 to 6."

    def step(self, action):
        won = action.strip() == str(self.secret)
        return {"observation": "yes" if won else "no", "done": won, "success": won}
'''


@pytest.fixture
def export(tmp_path):
    write_export(tmp_path / "export")
    return tmp_path / "export"


def manifest_edit(root, change):
    manifest = json.loads((root / "manifest.json").read_text())
    change(next(row for row in manifest["environments"] if row["id"] == TARGET), manifest)
    (root / "manifest.json").write_text(json.dumps(manifest))


def refused_whole(root, *names):
    before, files = database_state(), folder_state(root.parent)
    with pytest.raises(CommandError) as refusal:
        call_command("import", str(root))
    message = str(refusal.value)
    for name in names:
        assert name in message, message
    assert "nothing was imported" in message
    assert database_state() == before and folder_state(root.parent) == files
    return message


@pytest.mark.parametrize("hostile", [*TRAVERSALS, *LOOK_ALIKES])
def test_an_id_off_the_pattern_is_refused(export, hostile):
    manifest_edit(export, lambda row, _: row.update(id=hostile))
    refused_whole(export, "is refused", "environments/<author>/env_NNN")


@pytest.mark.parametrize("field", ["source", "metadata", "privileged"])
@pytest.mark.parametrize("hostile", TRAVERSALS)
def test_traversal_in_every_path_field_is_refused_naming_the_entry(export, field, hostile):
    (export.parent / "outside").write_text("{}")
    manifest_edit(export, lambda row, _: row.update({field: hostile}))
    refused_whole(export, TARGET, field)


@pytest.mark.parametrize(("name", "kind"), [
    ("env.py", "file outside"), ("metadata.json", "dev-zero"), ("privileged.json", "file outside"),
    ("metadata.json", "fifo"), ("env.py", "folder"), ("env.py", "dev-zero")])
def test_links_and_special_files_are_refused_at_once(export, name, kind):
    """Finding 9: a link is never followed and a FIFO never waited on."""
    path = export / TARGET / name
    data = path.read_bytes()
    path.unlink()
    if kind == "file outside":
        (export.parent / "secret").write_bytes(data)
        path.symlink_to(export.parent / "secret")
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with fifo_watchdog(path):
        message = refused_whole(export, TARGET)
    assert "symbolic link" in message or "not a plain file" in message, message


def test_a_version_folder_that_is_a_link_is_refused(export):
    elsewhere = export.parent / "elsewhere"
    (export / TARGET).rename(elsewhere)
    (export / TARGET).symlink_to(elsewhere, target_is_directory=True)
    refused_whole(export, TARGET, "symbolic link")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_manifest_that_is_a_link_or_a_fifo_is_refused(export, kind):
    manifest = export / "manifest.json"
    (export.parent / "real.json").write_bytes(manifest.read_bytes())
    manifest.unlink()
    if kind == "symlink":
        manifest.symlink_to(export.parent / "real.json")
    else:
        os.mkfifo(manifest)
    with fifo_watchdog(manifest):
        refused_whole(export, "manifest.json")


def test_a_class_file_over_the_source_cap_is_refused(export):
    path = export / TARGET / "env.py"
    path.write_bytes(path.read_bytes() + b"#" * (64 * 1024) + b"\n")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest_edit(export, lambda row, _: row.update(source_sha256=digest))
    refused_whole(export, TARGET, "64 KiB")


def test_a_generated_class_carrying_a_design_over_the_cap_is_refused(export):
    big = DESIGN + "#" * (64 * 1024) + "\n"
    code = design_class_file(source=big, env_id=TARGET, content_hash=content_hash(big),
                             max_steps=5).encode()
    (export / TARGET / "env.py").write_bytes(code)
    manifest_edit(export, lambda row, _: row.update(
        source_sha256=hashlib.sha256(code).hexdigest(), class_name="EnvDuelsEnv"))
    refused_whole(export, TARGET, "design it carries", "64 KiB")


def test_many_rows_naming_one_file_count_against_the_import_budget(export):
    """Finding 4: one 60 KiB class named by 1,200 rows is 70 MiB read, over the 64 MiB cap."""
    code = b"class Big:\n    pass\n" + b"#" * (60 * 1024) + b"\n"
    (export / "big.py").write_bytes(code)
    manifest = json.loads((export / "manifest.json").read_text())
    template = manifest["environments"][0]
    rows = []
    for number in range(1, 1201):
        rows.append({**template, "id": f"environments/many/env_{number:04d}",
                     "source": "big.py", "class_name": "Big",
                     "source_sha256": hashlib.sha256(code).hexdigest(), "privileged": None})
    manifest["environments"] = rows
    (export / "manifest.json").write_text(json.dumps(manifest))
    refused_whole(export, "environments/many/env_", "over 64 MiB")


def forged(step_body: str) -> str:
    """A class file laid out as EnvDuels generates one, whose runtime's `step` is replaced."""
    genuine = design_class_file(source=DESIGN, env_id=TARGET, content_hash=content_hash(DESIGN),
                                max_steps=5)
    runtime = RUNTIME.read_text(encoding="utf-8")
    start = runtime.index("    def step(self, action: str):\n        \"\"\"Play one action")
    end = runtime.index("    def close(self) -> None:\n        if self._runner")
    return genuine.replace(runtime[start:end], step_body, 1)


@pytest.mark.parametrize("variant", ["base step always wins", "subclass step", "other runtime"])
def test_a_class_that_only_looks_generated_is_played_as_itself(export, variant):
    """Finding 12: the carried design is played only when the file is exactly what EnvDuels
    generates from it; otherwise what is played is the file any other harness runs."""
    if variant == "base step always wins":
        code = forged("    def step(self, action):\n"
                      "        return 'correct', 1.0, True, False, {}\n\n")
    elif variant == "subclass step":
        code = design_class_file(source=DESIGN, env_id=TARGET,
                                 content_hash=content_hash(DESIGN), max_steps=5) + (
            "\n    def step(self, action):\n        return 'correct', 1.0, True, False, {}\n")
    else:
        code = "# another EnvDuels release\n" + design_class_file(
            source=DESIGN, env_id=TARGET, content_hash=content_hash(DESIGN), max_steps=5)
    (export / TARGET / "env.py").write_text(code)
    manifest_edit(export, lambda row, _: row.update(
        source_sha256=hashlib.sha256(code.encode()).hexdigest(), class_name="EnvDuelsEnv"))
    entry = next(entry for entry in export_read(export) if entry.row.id == TARGET)
    assert entry.design_source is None and entry.class_source == code


def test_a_class_exactly_as_generated_plays_the_design_it_carries(export):
    code = design_class_file(source=DESIGN, env_id=TARGET, content_hash=content_hash(DESIGN),
                             max_steps=5)
    (export / TARGET / "env.py").write_text(code)
    manifest_edit(export, lambda row, _: row.update(
        source_sha256=hashlib.sha256(code.encode()).hexdigest(), class_name="EnvDuelsEnv"))
    entry = next(entry for entry in export_read(export) if entry.row.id == TARGET)
    assert entry.design_source == DESIGN and entry.design_max_steps == 5


def test_an_export_whose_claimed_panel_hash_differs_from_its_versions_is_refused(tmp_path):
    """A panel exported by EnvDuels claims its hash; the versions read back must give it."""
    panel = stored_panel(tmp_path / "handmade", name="genuine")
    call_command("export", "--format", "envduels-v1", "--panel", "genuine",
                 "--out", str(tmp_path / "out"))
    preview = panel_import_preview(root=tmp_path / "out")
    assert preview.manifest_sha256 == panel.manifest_sha256 and preview.existing == panel
    privileged = tmp_path / "out" / TARGET / "privileged.json"
    document = json.loads(privileged.read_text())
    document["hints"] = dict.fromkeys(document["hints"], "Any answer wins.")
    privileged.write_text(json.dumps(document))
    refused_whole(tmp_path / "out", "claims the panel hash", panel.manifest_sha256)
