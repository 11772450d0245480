"""`/panels/import/` (staff): the hand-written export and snapshot uploaded as archives, a
preview whose counts equal the files with nothing written, the import on the confirming POST;
every broken copy the command line refuses is refused in the preview, naming the version and
the fault, with nothing written; `/import/` points an envduels-v1 upload to its page."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from duels.models import OutsideOutcome, Panel
from tests.duels.panels.handmade import write_export, write_snapshot
from tests.duels.panels.test_import_export import breakers, nothing_written
from tests.duels.panels.test_snapshot import TARGET, change_hint, other_seeds, source_one_byte_off

pytestmark = pytest.mark.django_db

URL = "/panels/import/"


def archive_of(folder: Path, name: str, *, kind: str = "tar") -> SimpleUploadedFile:
    """The folder as an archive holding it (as `tar czf x.tgz folder` or `zip -r` make)."""
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(folder.rglob("*")):
                archive.write(path, f"{folder.name}/{path.relative_to(folder)}")
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            archive.add(folder, arcname=folder.name)
    return SimpleUploadedFile(name, buffer.getvalue())


@pytest.fixture
def files(tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    write_export(tmp_path / "export")
    write_snapshot(tmp_path / "snapshot", tmp_path / "export")
    return tmp_path


def staged(settings) -> list[Path]:
    root = Path(settings.VAR_DIR) / "panel-imports"
    return list(root.iterdir()) if root.is_dir() else []


def test_staff_preview_then_import_the_export_and_its_snapshot(
        sandboxed, files, client, staff, settings):
    client.force_login(staff)
    assert 'id="panel-import-form"' in client.get(URL).content.decode()
    response = client.post(URL, {
        "archive": archive_of(files / "export", "original.zip", kind="zip"),
        "snapshot": archive_of(files / "snapshot", "snapshot.tar.gz")})
    page = response.content.decode()
    assert response.status_code == 200, page
    manifest = json.loads((files / "export" / "manifest.json").read_text())
    assert f'<span id="preview-version-count">{len(manifest["environments"])}</span>' in page
    assert '<span id="preview-outcome-count">108</span>' in page
    assert "alpha-7b, beta-70b, gamma-405b" in page and "arithmetic, words" in page
    assert nothing_written() and len(staged(settings)) == 1
    token = staged(settings)[0].name

    imported = client.post(f"{URL}confirm/", {"token": token})
    panel = Panel.objects.get()
    assert imported.status_code == 302 and imported["Location"] == f"/panels/{panel.uuid}/"
    assert panel.name == "original" and panel.entries.count() == 6
    assert OutsideOutcome.objects.filter(panel=panel).count() == 108
    assert staged(settings) == []
    # The same files again: the preview says the export is here, and nothing is added.
    again = client.post(URL, {"archive": archive_of(files / "export", "original.tar.gz"),
                              "snapshot": archive_of(files / "snapshot", "s.zip", kind="zip")})
    assert "already here" in again.content.decode()
    assert '<span id="preview-outcome-count">0</span>' in again.content.decode()
    refused = client.post(f"{URL}confirm/", {"token": token})
    assert refused.status_code == 400 and "no longer here" in refused.content.decode()


@pytest.mark.parametrize(("breaker", "entry", "problem"), breakers(),
                         ids=lambda value: getattr(value, "__name__", None))
def test_each_broken_export_is_refused_in_the_preview_with_nothing_written(
        files, client, staff, settings, breaker, entry, problem):
    breaker(files / "export")
    client.force_login(staff)
    response = client.post(URL, {"archive": archive_of(files / "export", "broken.tar")})
    page = response.content.decode()
    assert response.status_code == 400 and 'id="preview-refused"' in page
    assert entry in page and problem.replace('"', "&quot;") in page
    assert 'id="import-confirm"' not in page
    assert nothing_written() and staged(settings) == []


@pytest.mark.parametrize(("breaker", "problem"), [
    (change_hint, "hint differs"), (source_one_byte_off, "env.py differs"),
    (other_seeds, "differ from the panel&#x27;s benchmark seeds")],
    ids=["hint", "source", "seeds"])
def test_each_broken_snapshot_is_refused_in_the_preview_with_nothing_written(
        sandboxed, files, client, staff, settings, breaker, problem):
    breaker(files / "snapshot")
    client.force_login(staff)
    response = client.post(URL, {"archive": archive_of(files / "export", "original.tar"),
                                 "snapshot": archive_of(files / "snapshot", "snapshot.zip",
                                                        kind="zip")})
    page = response.content.decode()
    assert response.status_code == 400 and 'id="preview-snapshot-refused"' in page
    assert TARGET in page and problem in page and 'id="import-confirm"' not in page
    assert nothing_written() and staged(settings) == []


def test_only_staff_upload_and_only_the_uploader_confirms(
        sandboxed, files, client, staff, owner, django_user_model, settings):
    client.force_login(owner)
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"archive": archive_of(files / "export", "x.tar")}
                       ).status_code == 403
    client.force_login(staff)
    client.post(URL, {"archive": archive_of(files / "export", "x.tar")})
    token = staged(settings)[0].name
    other = django_user_model.objects.create_user("second-staff", is_staff=True)
    client.force_login(other)
    refused = client.post(f"{URL}confirm/", {"token": token})
    assert refused.status_code == 400 and "another user" in refused.content.decode()
    assert not Panel.objects.exists()
    client.force_login(staff)
    assert client.post(f"{URL}confirm/", {"token": "../../etc"}).status_code == 400
    assert client.post(f"{URL}confirm/", {"token": token, "cancel": "1"}).status_code == 302
    assert staged(settings) == [] and not Panel.objects.exists()


def test_import_page_tells_the_two_formats_apart(files, client, staff):
    client.force_login(staff)
    manifest = (files / "export" / "manifest.json").read_bytes()
    for upload in (SimpleUploadedFile("manifest.json", manifest),
                   archive_of(files / "export", "export.zip", kind="zip")):
        response = client.post("/import/", {"file": upload})
        page = response.content.decode()
        assert response.status_code == 400 and "envduels-v1" in page
        assert 'href="/panels/import/"' in page and "manage.py import DIR" in page
    exchange = b'{"format": "envduels.v1"}\n'
    response = client.post(URL, {"archive": SimpleUploadedFile("x.jsonl", exchange)})
    assert response.status_code == 400
    assert "envduels.v1 exchange file: upload it at /import/" in response.content.decode()
