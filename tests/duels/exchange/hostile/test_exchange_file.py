"""Hostile `envduels.v1` files: every one is refused whole, naming the entry, and leaves the
database and the file system as they were; the genuine file still imports with its hash."""

from __future__ import annotations

import copy
import os

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from duels.models import Evaluation, Panel, PanelEntry, Player, content_hash
from tests.duels.exchange.hostile.inputs import (
    LOOK_ALIKES,
    TRAVERSALS,
    database_state,
    exchange_records,
    fifo_watchdog,
    folder_state,
    forget_everything,
    manifest_restate,
    records_write,
    sha256,
    stored_panel,
)

pytestmark = pytest.mark.django_db

ALWAYS_WINS = '''class Always:
    def __init__(self, max_turns=6):
        self.max_turns = max_turns

    def reset(self, seed=None):
        return "Say anything.", {}

    def step(self, action):
        return "correct", 1.0, True, False, {}
'''


@pytest.fixture
def genuine(tmp_path):
    """(records of the genuine panel's exchange file, the panel's manifest hash), nothing
    stored any more."""
    panel = stored_panel(tmp_path / "export")
    records = exchange_records(tmp_path / "genuine.jsonl")
    forget_everything()
    return records, panel.manifest_sha256


def of_kind(records, kind):
    return [record for record in records if record.get("kind") == kind]


def refused_whole(path, tmp_path, *names):
    """Import `path`; it must be refused naming each of `names`, with nothing changed."""
    before, files = database_state(), folder_state(tmp_path)
    with pytest.raises(CommandError) as refusal:
        call_command("import", str(path))
    message = str(refusal.value)
    for name in names:
        assert name in message, message
    assert "nothing was imported" in message
    assert database_state() == before
    assert folder_state(tmp_path) == files
    return message


def test_the_genuine_file_imports_and_a_reexport_keeps_its_hash(genuine, tmp_path):
    records, digest = genuine
    call_command("import", str(records_write(records, tmp_path / "file.jsonl")))
    panel = Panel.objects.get()
    assert panel.manifest_sha256 == digest and panel.entries.count() == 6
    again = exchange_records(tmp_path / "again.jsonl")
    assert of_kind(again, "panel")[0]["manifest_sha256"] == digest


@pytest.mark.parametrize("hostile", [*TRAVERSALS, *LOOK_ALIKES, "/tmp/x/y",
                                     "../../../../tmp/x/y"])
def test_an_entry_id_off_the_pattern_is_refused_naming_the_entry(genuine, tmp_path, hostile):
    records = copy.deepcopy(genuine[0])
    of_kind(records, "panel_entry")[2]["entry_id"] = hostile
    manifest_restate(records)
    message = refused_whole(records_write(records, tmp_path / "file.jsonl"), tmp_path,
                            "panel entry", "is refused")
    assert repr(hostile[:120]) in message
    assert not os.path.exists("/tmp/x/y/environment.py")


def test_a_swapped_source_and_hint_under_the_genuine_hash_are_refused(genuine, tmp_path):
    """Finding 2: the environment an entry points at plays "every answer wins" and its hint is
    changed, with the environment's own content hash restated; the panel's hash is genuine."""
    records, digest = copy.deepcopy(genuine[0]), genuine[1]
    entry = of_kind(records, "panel_entry")[1]
    environment = next(record for record in of_kind(records, "environment")
                       if record["uuid"] == entry["environment"])
    environment["source"], environment["class_name"] = ALWAYS_WINS, "Always"
    environment["content_hash"] = content_hash(ALWAYS_WINS)
    hint = next(record for record in of_kind(records, "hint") if record["uuid"] == entry["hint_1"])
    hint["text"] = "Any answer wins."
    assert of_kind(records, "panel")[0]["manifest_sha256"] == digest
    refused_whole(records_write(records, tmp_path / "file.jsonl"), tmp_path,
                  entry["entry_id"], "does not hold the source")


@pytest.mark.parametrize("change", ["text", "other environment", "dropped", "level"])
def test_hint_rows_that_differ_from_the_entry_are_refused(genuine, tmp_path, change):
    records = copy.deepcopy(genuine[0])
    entries = of_kind(records, "panel_entry")
    entry = entries[0]  # graded hints: hint_1 and hint_2
    hints = {record["uuid"]: record for record in of_kind(records, "hint")}
    if change == "text":
        hints[entry["hint_2"]]["text"] += " (changed)"
    elif change == "other environment":
        entry["hint_1"] = entries[2]["hint_1"]
    elif change == "dropped":
        entry["hint_2"] = None
    else:
        entry["hint_1"], entry["hint_2"] = entry["hint_2"], entry["hint_1"]
    refused_whole(records_write(records, tmp_path / "file.jsonl"), tmp_path,
                  entry["entry_id"], "hint_")


def test_an_entry_added_to_a_stored_panel_is_refused(genuine, tmp_path):
    records = genuine[0]
    call_command("import", str(records_write(records, tmp_path / "file.jsonl")))
    extra = copy.deepcopy(of_kind(records, "panel_entry")[0])
    extra.update(uuid="7a0c5a1e-0000-4000-8000-000000000001", position=40,
                 entry_id="environments/alpha-7b/env_009/harden_01")
    refused_whole(records_write([records[0], extra], tmp_path / "extra.jsonl"), tmp_path,
                  "environments/alpha-7b/env_009/harden_01", "never gains")


def test_outside_outcomes_naming_a_player_evaluated_on_the_panel_are_refused(genuine,
                                                                             tmp_path):
    """Finding 6, exchange file side."""
    records = genuine[0]
    call_command("import", str(records_write(records, tmp_path / "file.jsonl")))
    panel = Panel.objects.get()
    Evaluation.objects.create(panel=panel, player=Player.objects.get(name="alpha-7b"))
    entry = of_kind(records, "panel_entry")[0]
    outcome = {"kind": "outside_outcome", "uuid": "7a0c5a1e-0000-4000-8000-000000000002",
               "panel": str(panel.uuid), "entry": entry["uuid"], "model": "alpha-7b",
               "hinted": False, "seed": entry["benchmark_seeds"][0], "episode": 0, "trial": 0,
               "status": "success", "reported_status": "success", "hint_level": 1}
    refused_whole(records_write([records[0], outcome], tmp_path / "outcomes.jsonl"), tmp_path,
                  "alpha-7b", "was evaluated here")


@pytest.mark.parametrize("hostile", ["../../outside", "env_001/../../x", "/tmp/x",
                                     "env_\u0661\u0662\u0663"])
def test_a_slot_off_the_pattern_is_refused(genuine, tmp_path, hostile):
    records = copy.deepcopy(genuine[0])
    of_kind(records, "environment")[0]["slot"] = hostile
    refused_whole(records_write(records, tmp_path / "file.jsonl"), tmp_path,
                  "field 'slot'", "is refused")


def test_a_class_source_over_the_cap_is_refused(genuine, tmp_path):
    records = copy.deepcopy(genuine[0])
    entry = of_kind(records, "panel_entry")[0]
    entry["class_source"] += "#" * (300 * 1024) + "\n"
    entry["source_sha256"] = sha256(entry["class_source"])
    manifest_restate(records)
    refused_whole(records_write(records, tmp_path / "file.jsonl"), tmp_path,
                  entry["entry_id"], "class_source' is over")


def test_a_line_over_the_cap_is_refused(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"format": "envduels.v1"}\n{"kind": "player", "name": "'
                     + b"x" * (9 * 1024 * 1024) + b'"}\n')
    refused_whole(path, tmp_path, "line 2", "over 8,388,608 bytes")


@pytest.mark.parametrize("special", ["fifo", "symlink", "dev-zero", "folder-link"])
def test_special_files_are_refused_at_once(genuine, tmp_path, special):
    """Finding 9 for the exchange file: no FIFO waits for a writer, no link is followed."""
    real = records_write(genuine[0], tmp_path / "real.jsonl")
    path = tmp_path / "named.jsonl"
    if special == "fifo":
        os.mkfifo(path)
    elif special == "symlink":
        path.symlink_to(real)
    elif special == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(tmp_path / "nowhere")
    with fifo_watchdog(path), pytest.raises(CommandError) as refusal:
        call_command("import", str(path))
    assert any(words in str(refusal.value) for words in (
        "not a plain file", "symbolic link", "missing")), refusal.value
    assert not Panel.objects.exists()


def test_a_stored_row_with_a_hostile_id_cannot_make_the_export_write_outside(tmp_path):
    """Finding 1 end to end: even a row stored before ids were checked is never followed."""
    panel = stored_panel(tmp_path / "export")
    entry = panel.entries.order_by("position").first()
    outside = tmp_path / "outside"
    PanelEntry.objects.filter(pk=entry.pk).delete()
    entry.pk, entry.entry_id = None, f"../../{outside.name}/y"
    entry.save()
    absolute = PanelEntry.objects.get(pk=entry.pk)
    absolute.pk, absolute.uuid = None, None
    files = folder_state(tmp_path)
    for hostile in (f"../../{outside.name}/y", str(outside / "y")):
        PanelEntry.objects.filter(pk=entry.pk).delete()
        entry.pk, entry.entry_id = None, hostile
        entry.save()
        with pytest.raises(CommandError, match="would leave the folder|is refused"):
            call_command("export", "--format", "envduels-v1", "--panel", panel.name,
                         "--out", str(tmp_path / "out" / "dir"))
        assert not outside.exists()
        assert not (tmp_path / "out" / "dir").exists()
    assert {path for path in folder_state(tmp_path) if not path.startswith("out")} == \
        set(files)


def test_the_import_page_refuses_a_hostile_file_with_the_entry_named(genuine, tmp_path, client,
                                                                     staff):
    records = copy.deepcopy(genuine[0])
    of_kind(records, "panel_entry")[0]["entry_id"] = "/tmp/x/y"
    manifest_restate(records)
    client.force_login(staff)
    before = database_state()
    upload = SimpleUploadedFile("panel.jsonl", records_write(
        records, tmp_path / "file.jsonl").read_bytes())
    response = client.post("/import/", {"file": upload})
    assert response.status_code == 400
    assert "/tmp/x/y" in response.text and "nothing was imported" in response.text
    assert database_state() == before


def test_a_validation_report_over_the_cap_is_refused(genuine, tmp_path):
    records = copy.deepcopy(genuine[0])
    environment = of_kind(records, "environment")[0]
    environment["validation"] = {"valid": True, "padding": "x" * (300 * 1024)}
    refused_whole(records_write(records, tmp_path / "file.jsonl"), tmp_path,
                  "field 'validation' is over 256 KiB")
