"""A study in the envduels.v1 exchange file: the study record, its versions' domain, seeds, slot,
revision, parent and version name, graded hint levels, and its field plays; filtered exports
carry a version's whole lineage; bad study data is refused naming the line."""

from __future__ import annotations

import json

import pytest

from duels.exchange.importer import ExchangeImportError
from duels.exchange.selectors import (
    EnvironmentExportFilters,
    exchange_environments_filtered,
    exchange_for_environments,
)
from duels.models import Environment, Episode, SlotPhase, Status, Study, StudySlot
from tests.duels.exchange.test_exchange import export_text, import_text
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def wipe_studies() -> None:
    """Every study with its versions and field plays (the plays first: they hold the hints)."""
    Episode.objects.filter(study__isnull=False).delete()
    Study.objects.all().delete()


def records(text: str, kind: str) -> list[dict]:
    return [row for row in map(json.loads, text.splitlines()[1:]) if row["kind"] == kind]


def test_a_study_round_trips_and_reimporting_is_a_no_op():
    study = played_study(invalid_revision_of="gamma")
    before = {str(v.uuid): (v.domain, v.benchmark_seeds, v.slot, v.revision, v.version,
                            str(v.parent.uuid) if v.parent else None, v.status)
              for v in Environment.objects.filter(study=study).select_related("parent")}
    plays = Episode.objects.filter(study=study).count()
    text = export_text()
    [record] = records(text, "study")
    assert record["uuid"] == str(study.uuid) and record["domains"] == ["maze"]
    assert record["per_author"] == 1 and record["harden_rounds"] == 1 and record["seeds"] == 2
    revision = next(row for row in records(text, "environment") if row["revision"] == 1)
    assert revision["version"] == "env_001/harden_01" and revision["parent"]
    assert revision["study"] == str(study.uuid) and revision["benchmark_seeds"] == [11, 22]
    assert all(row["study"] == str(study.uuid) for row in records(text, "episode"))
    assert {row["level"] for row in records(text, "hint")} == {1}

    wipe_studies()  # its versions and plays go with it
    assert not Environment.objects.filter(study__isnull=False).exists()
    report = import_text(text)
    assert report.created["study"] == 1 and report.created["environment"] == len(before)
    imported = Study.objects.get(uuid=study.uuid)
    after = {str(v.uuid): (v.domain, v.benchmark_seeds, v.slot, v.revision, v.version,
                           str(v.parent.uuid) if v.parent else None, v.status)
             for v in Environment.objects.filter(study=imported).select_related("parent")}
    assert after == before
    assert Episode.objects.filter(study=imported).count() == plays
    assert set(imported.players.values_list("name", flat=True)) == {"alpha", "beta", "gamma"}
    # The slots an imported study's versions imply, ended, so its page shows the lineage.
    slots = StudySlot.objects.filter(study=imported)
    assert slots.count() == 3 and set(slots.values_list("phase", flat=True)) == {SlotPhase.DONE}
    assert imported.slots_done == 3 and imported.episodes_total == plays
    assert imported.status == Status.FINISHED
    again = import_text(text)
    assert again.created_total == 0


def test_an_older_file_without_study_fields_imports_unchanged(make):
    environment = make.environment()
    text = export_text()
    older = [text.splitlines()[0]]
    for line in text.splitlines()[1:]:
        row = json.loads(line)
        for name in {"environment": ("domain", "benchmark_seeds", "study", "slot", "revision",
                                     "parent", "version"),
                     "hint": ("level",), "episode": ("study",)}.get(row["kind"], ()):
            row.pop(name, None)
        if row["kind"] != "study":
            older.append(json.dumps(row))
    Episode.objects.all().delete()
    Environment.objects.all().delete()
    import_text("\n".join(older) + "\n")
    restored = Environment.objects.get(uuid=environment.uuid)
    assert (restored.study, restored.slot, restored.revision, restored.benchmark_seeds) == (
        None, "", 0, None)
    assert restored.version == ""


def _changed(text: str, kind: str, change) -> str:
    lines = text.splitlines()
    for index, line in enumerate(lines[1:], start=1):
        row = json.loads(line)
        if row["kind"] == kind and change(row):
            lines[index] = json.dumps(row)
            return "\n".join(lines) + "\n"
    raise AssertionError("nothing changed")


@pytest.mark.parametrize(("change", "message"), [
    (lambda row: row.update(version="env_009") or row["revision"] == 1,
     "field 'version'"),
    (lambda row: row.update(benchmark_seeds=[3, 3]) or True,
     "at most 64 distinct whole numbers"),
    (lambda row: row.update(benchmark_seeds=[-1]) or True,
     "at most 64 distinct whole numbers"),
    (lambda row: row.update(slot="") or row["revision"] == 1, "names its 'slot'"),
])
def test_bad_study_data_is_refused_naming_the_line(change, message):
    played_study()
    text = _changed(export_text(), "environment", change)
    wipe_studies()
    with pytest.raises(ExchangeImportError, match=message) as error:
        import_text(text)
    assert error.value.line > 1
    assert not Study.objects.exists()


def test_a_study_with_too_many_hardening_rounds_is_refused():
    played_study()
    text = _changed(export_text(), "study", lambda row: row.update(harden_rounds=9) or True)
    wipe_studies()
    with pytest.raises(ExchangeImportError, match="'harden_rounds' is at most 3"):
        import_text(text)


def test_a_filtered_export_carries_each_versions_lineage_and_its_study():
    study = played_study()
    revision = Environment.objects.get(study=study, author__name="alpha", revision=1)
    # Only the revision's design is asked for: its parent and its study come along.
    Environment.objects.filter(pk=revision.pk).update(family="only-this")
    chosen = exchange_environments_filtered(filters=EnvironmentExportFilters(family="only-this"))
    text = export_text(exchange_for_environments(environments=chosen))
    environments = {row["uuid"] for row in records(text, "environment")}
    assert {str(revision.uuid), str(revision.parent.uuid)} <= environments
    assert [row["uuid"] for row in records(text, "study")] == [str(study.uuid)]
    # It imports into an installation that has none of it.
    wipe_studies()
    assert import_text(text).created["study"] == 1
