"""Uploaded archives unpack only regular files and folders inside a fresh folder, under caps,
and every hostile member refuses the whole archive with the member named."""

from __future__ import annotations

import io
import itertools
import tarfile
import zipfile
from pathlib import Path

import pytest

from duels.panels import archives
from duels.panels.archives import (
    EXCHANGE,
    MANIFEST,
    TAR,
    UNKNOWN,
    ZIP,
    archive_unpacked,
    folder_with,
    upload_kind,
)
from duels.panels.errors import PanelError

HOSTILE_NAMES = ["/etc/passwd", "../outside.txt", "export/../../outside.txt", "a/../../b",
                 "C:/windows.txt", "dir\\..\\evil.txt", "./export/./../../outside.txt",
                 "//server/share.txt"]


def zip_of(members: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    buffer.seek(0)
    return buffer


def tar_of(members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w") -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode, format=tarfile.GNU_FORMAT) as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                archive.addfile(info, io.BytesIO(member[1]))
    buffer.seek(0)
    return buffer


def unpacked_files(stream) -> dict[str, bytes]:
    with archive_unpacked(stream=stream, what="the upload") as root:
        return {str(path.relative_to(root)): path.read_bytes()
                for path in root.rglob("*") if path.is_file()}


def test_files_and_folders_unpack_and_the_folder_is_removed_afterwards():
    members = {"export/manifest.json": b"{}", "export/environments/a/env.py": b"x = 1\n"}
    for stream in (zip_of(members), tar_of(list(members.items())),
                   tar_of(list(members.items()), mode="w:gz")):
        with archive_unpacked(stream=stream, what="the upload") as root:
            assert (root / "export/environments/a/env.py").read_bytes() == b"x = 1\n"
            assert folder_with(root, "manifest.json", what="it") == root / "export"
            kept = root
        assert not kept.exists()


def test_the_folder_is_removed_when_the_work_inside_fails():
    with pytest.raises(RuntimeError), archive_unpacked(stream=zip_of({"a.txt": b"a"}),
                                                       what="the upload") as root:
        kept = root
        raise RuntimeError("the import failed")
    assert not kept.exists()


@pytest.mark.parametrize(("name", "packer"), list(itertools.product(
    HOSTILE_NAMES, ["zip", "tar"])))
def test_a_member_that_could_land_outside_refuses_the_whole_archive(name, packer, tmp_path):
    members = {"export/manifest.json": b"{}", name: b"owned"}
    stream = zip_of(members) if packer == "zip" else tar_of(list(members.items()))
    with pytest.raises(PanelError) as refused:
        unpacked_files(stream)
    assert "the upload: archive member" in str(refused.value)
    assert not (tmp_path.parent / "outside.txt").exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE,
                                  tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_tar_links_devices_and_fifos_are_refused(kind):
    special = tarfile.TarInfo("export/run.json")
    special.type = kind
    special.linkname = "/dev/zero"
    with pytest.raises(PanelError, match="export/run.json.*only files and folders"):
        unpacked_files(tar_of([("export/manifest.json", b"{}"), special]))


def test_a_zip_symlink_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("export/run.json")
        link.external_attr = (0o120777 << 16)
        archive.writestr(link, "/etc/passwd")
    buffer.seek(0)
    with pytest.raises(PanelError, match="a symlink"):
        unpacked_files(buffer)


def test_a_member_appearing_twice_is_refused():
    with pytest.raises(PanelError, match="appears twice"):
        unpacked_files(tar_of([("a.txt", b"one"), ("./a.txt", b"two")]))


def test_caps_count_the_bytes_unpacked_and_the_members(monkeypatch):
    monkeypatch.setattr(archives, "MAX_MEMBER_BYTES", 1000)
    # Deflate makes 5,000 zero bytes a few dozen bytes: the cap holds on what is unpacked.
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bomb.txt", b"\x00" * 5000)
    buffer.seek(0)
    with pytest.raises(PanelError, match="bomb.txt"):
        unpacked_files(buffer)
    monkeypatch.setattr(archives, "MAX_MEMBER_BYTES", 16 * 1024 * 1024)
    monkeypatch.setattr(archives, "MAX_TOTAL_BYTES", 2500)
    with pytest.raises(PanelError, match="over 2,500 bytes"):
        unpacked_files(zip_of({f"f{number}.txt": b"x" * 1000 for number in range(3)}))
    monkeypatch.setattr(archives, "MAX_MEMBERS", 5)
    with pytest.raises(PanelError, match="more than 5 members|at most 5"):
        unpacked_files(tar_of([(f"f{number}.txt", b"x") for number in range(6)]))
    with pytest.raises(PanelError, match="at most 5"):
        unpacked_files(zip_of({f"f{number}.txt": b"x" for number in range(6)}))


def test_uploads_are_told_apart_by_their_content(tmp_path):
    exchange = b'{"format": "envduels.v1"}\n{"kind": "player"}\n'
    manifest = b'{\n  "format_version": 1,\n  "environments": []\n}'
    assert upload_kind(io.BytesIO(exchange)) == EXCHANGE
    assert upload_kind(io.BytesIO(manifest)) == MANIFEST
    assert upload_kind(zip_of({"a": b"b"})) == ZIP
    assert upload_kind(tar_of([("a", b"b")])) == TAR
    assert upload_kind(tar_of([("a", b"b")], mode="w:gz")) == TAR
    assert upload_kind(io.BytesIO(b"hello")) == UNKNOWN
    with pytest.raises(PanelError, match="envduels.v1 exchange file: upload it at /import/"):
        unpacked_files(io.BytesIO(exchange))
    with pytest.raises(PanelError, match="manifest.json alone"):
        unpacked_files(io.BytesIO(manifest))


def test_a_folder_without_its_marker_is_named(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    with pytest.raises(PanelError, match="no run.json"):
        folder_with(Path(tmp_path), "run.json", what="the snapshot archive")
