"""Uploaded archives (zip or tar) unpacked safely, and uploads told apart by their content.

An archive from the browser is untrusted: every member is checked before a byte of it is
written. Only regular files and folders are unpacked; a member with an absolute path, a `..`
part, a backslash or a NUL, a symlink, a hard link, a device or a FIFO refuses the whole
archive, as do more than MAX_MEMBERS members, a file over MAX_MEMBER_BYTES or more than
MAX_TOTAL_BYTES in all (counted on the bytes actually unpacked, never on what the header says).
Everything lands in a fresh temporary folder that is removed when the `with` block ends,
whatever happens inside it (docs/security.md lists the numbers).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from duels.panels.errors import PanelError

MAX_MEMBERS = 10_000
MAX_MEMBER_BYTES = 16 * 1024 * 1024  # the largest file an export holds: its manifest.json
MAX_TOTAL_BYTES = 128 * 1024 * 1024
CHUNK = 64 * 1024

# What an upload is, read from its first bytes (never from its name).
EXCHANGE = "envduels.v1 exchange file"
MANIFEST = "envduels-v1 manifest.json"
ZIP = "zip archive"
TAR = "tar archive"
UNKNOWN = "unknown"


def upload_kind(stream: BinaryIO) -> str:
    """What the upload is: ZIP, TAR, EXCHANGE (JSON lines opening with the envduels.v1 header),
    MANIFEST (an envduels-v1 export's manifest.json on its own) or UNKNOWN. The stream is
    rewound."""
    stream.seek(0)
    head = stream.read(CHUNK)
    stream.seek(0)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return ZIP
    if head[257:262] == b"ustar" or head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" \
            or head[:6] == b"\xfd7zXZ\x00":
        return TAR
    first_line = head.split(b"\n", 1)[0].strip()
    with contextlib.suppress(ValueError):
        header = json.loads(first_line.decode("utf-8-sig"))
        if isinstance(header, dict) and header.get("format") == "envduels.v1":
            return EXCHANGE
    if head.lstrip().startswith(b"{") and b'"format_version"' in head:
        return MANIFEST
    return UNKNOWN


def member_path(name: str) -> PurePosixPath | None:
    """The relative path a member unpacks to (None for the archive's top folder itself);
    PanelError for anything that could land outside the folder."""
    if not name or "\x00" in name or "\\" in name:
        raise PanelError(f"archive member {name[:120]!r}: not a plain relative path")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise PanelError(f"archive member {name[:120]!r}: an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise PanelError(f"archive member {name[:120]!r}: a '..' in its path")
    return PurePosixPath(*parts) if parts else None


class _Budget:
    """Members and bytes unpacked so far, against the caps."""

    def __init__(self) -> None:
        self.members = 0
        self.total = 0
        self.paths: set[PurePosixPath] = set()

    def member(self, path: PurePosixPath) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise PanelError(f"the archive holds more than {MAX_MEMBERS} members")
        if path in self.paths:
            raise PanelError(f"archive member {str(path)[:120]!r} appears twice")
        self.paths.add(path)

    def declared(self, path: PurePosixPath, size: int) -> None:
        if size > MAX_MEMBER_BYTES:
            raise PanelError(f"archive member {str(path)[:120]!r} is {size:,} bytes; at most "
                             f"{MAX_MEMBER_BYTES:,} per file")


def _write(destination: Path, path: PurePosixPath, source: IO[bytes], budget: _Budget) -> None:
    target = destination.joinpath(*path.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(destination):
        raise PanelError(f"archive member {str(path)[:120]!r} lands outside the archive")
    # O_EXCL and O_NOFOLLOW: never through a link, never over a file already unpacked.
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    written = 0
    with os.fdopen(descriptor, "wb") as out:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            budget.total += len(chunk)
            if written > MAX_MEMBER_BYTES:
                raise PanelError(f"archive member {str(path)[:120]!r} unpacks to over "
                                 f"{MAX_MEMBER_BYTES:,} bytes")
            if budget.total > MAX_TOTAL_BYTES:
                raise PanelError(f"the archive unpacks to over {MAX_TOTAL_BYTES:,} bytes")
            out.write(chunk)


def _unzip(stream: BinaryIO, destination: Path) -> None:
    budget = _Budget()
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError) as error:
        raise PanelError(f"not a readable zip archive ({error})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise PanelError(f"the archive holds {len(infos)} members; at most {MAX_MEMBERS}")
        for info in infos:
            path = member_path(info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                raise PanelError(f"archive member {info.filename[:120]!r}: "
                                 f"{'a symlink' if kind == stat.S_IFLNK else 'not a regular file'}"
                                 "; only files and folders are unpacked")
            if path is None:
                continue
            budget.member(path)
            if info.is_dir() or kind == stat.S_IFDIR:
                destination.joinpath(*path.parts).mkdir(parents=True, exist_ok=True)
                continue
            budget.declared(path, info.file_size)
            try:
                with archive.open(info) as source:
                    _write(destination, path, source, budget)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError,
                    EOFError) as error:
                raise PanelError(f"archive member {info.filename[:120]!r} cannot be read "
                                 f"({str(error)[:200]})") from None


def _untar(stream: BinaryIO, destination: Path) -> None:
    budget = _Budget()
    try:
        archive = tarfile.open(fileobj=stream, mode="r:*")  # noqa: SIM115 (closed below)
    except (tarfile.TarError, OSError, EOFError) as error:
        raise PanelError(f"not a readable tar archive ({error})") from None
    with archive:
        try:
            # Iterating reads one header at a time, so the member cap holds before all are read.
            for member in archive:
                path = member_path(member.name)
                if not (member.isreg() or member.isdir()):
                    what = ("a symlink" if member.issym() else "a hard link" if member.islnk()
                            else "a device or FIFO")
                    raise PanelError(f"archive member {member.name[:120]!r}: {what}; only "
                                     "files and folders are unpacked")
                if path is None:
                    continue
                budget.member(path)
                if member.isdir():
                    destination.joinpath(*path.parts).mkdir(parents=True, exist_ok=True)
                    continue
                budget.declared(path, member.size)
                source = archive.extractfile(member)
                _write(destination, path, source, budget)
        except (tarfile.TarError, OSError, EOFError) as error:
            raise PanelError(f"the tar archive cannot be read ({str(error)[:200]})") from None


@contextlib.contextmanager
def archive_unpacked(*, stream: BinaryIO, what: str) -> Iterator[Path]:
    """Unpack the zip or tar archive in `stream` into a fresh temporary folder, yield it and
    remove it afterwards. PanelError (naming `what`) for anything refused."""
    kind = upload_kind(stream)
    if kind not in (ZIP, TAR):
        advice = (" — it is an envduels.v1 exchange file: upload it at /import/"
                  if kind == EXCHANGE else
                  " — it is a manifest.json alone: archive the whole export folder (zip or tar)"
                  if kind == MANIFEST else "")
        raise PanelError(f"{what} is not a zip or tar archive{advice}")
    destination = Path(tempfile.mkdtemp(prefix="envduels-upload-")).resolve()
    try:
        try:
            (_unzip if kind == ZIP else _untar)(stream, destination)
        except PanelError as error:
            raise PanelError(f"{what}: {error}") from None
        yield destination
    finally:
        shutil.rmtree(destination, ignore_errors=True)


def folder_with(root: Path, marker: str, *, what: str) -> Path:
    """The unpacked folder holding `marker` (manifest.json, run.json): the archive's top, or
    its one top-level folder (an archive of the folder itself)."""
    if (root / marker).is_file():
        return root
    children = [child for child in root.iterdir() if not child.name.startswith(".")]
    if len(children) == 1 and children[0].is_dir() and (children[0] / marker).is_file():
        return children[0]
    raise PanelError(f"{what} has no {marker} at its top or in its one top-level folder")
