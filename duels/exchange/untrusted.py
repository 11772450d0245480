"""The one reader of files that come from another party: every import path opens them here.

A file is read only when it is a regular file reached without any symbolic link (checked on the
opened descriptor: `O_NOFOLLOW`, then `fstat`), inside the import's root, and no larger than
the cap of its kind; the cap holds while reading too, so a file that grows under the reader is
cut off, not swallowed. `O_NONBLOCK` on open means a FIFO is refused at once instead of waiting
for a writer. An `ImportBudget` counts every byte an import reads, a file named by many rows
counted each time, so many rows naming one large file cannot multiply what is stored.

The numbers are in docs/security.md ("Imported files").
"""

from __future__ import annotations

import io
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from duels.bounds import SOURCE_BYTES as MAX_SOURCE_BYTES

KIB, MIB = 1024, 1024 * 1024


@dataclass(frozen=True)
class FileKind:
    """A kind of imported content and its cap in bytes."""

    name: str
    limit: int


# An environment's source is 64 KiB wherever it comes from (validation, setter answers, files).
SOURCE = FileKind("source", MAX_SOURCE_BYTES)
# A class file EnvDuels generated is its runtime plus the design's source as a Python literal
# (escaping can make a 64 KiB source up to four times as long); what it plays is still capped
# at SOURCE once it is read (duels/panels/v1_read.py).
CLASS_FILE = FileKind("class file", 4 * MAX_SOURCE_BYTES + 16 * KIB)
# metadata.json, privileged.json, a snapshot version's run.json
DOCUMENT = FileKind("JSON document", 1 * MIB)
MANIFEST = FileKind("manifest", 16 * MIB)  # manifest.json, a snapshot's root run.json
EXCHANGE_FILE = FileKind("exchange file", 2048 * MIB)  # an envduels.v1 JSONL file
EXCHANGE_LINE = 8 * MIB  # one record line of an exchange file
CSV_FILE = FileKind("CSV file", 16 * MIB)  # transfer results
IMPORT_BYTES = 64 * MIB  # everything one folder import reads, duplicates counted


class UntrustedFileError(Exception):
    """An imported file cannot be read safely; the message names it and says why."""


@dataclass
class ImportBudget:
    """Bytes read so far by one import, against IMPORT_BYTES (each read counted, duplicates too)."""

    limit: int = IMPORT_BYTES
    used: int = 0

    def spend(self, size: int, what: str) -> None:
        self.used += size
        if self.used > self.limit:
            raise UntrustedFileError(
                f"{what}: the import reads over {self.limit // MIB} MiB in all (every file "
                "counted each time a row names it); split it into smaller imports")


def untrusted_relative(value: Any, what: str) -> PurePosixPath:
    """A relative path given by a file: POSIX parts, no `..`, no absolute path, no NUL."""
    if not isinstance(value, str) or not value or len(value) > 1000:
        raise UntrustedFileError(f"{what} is not a path inside the folder being imported")
    if "\x00" in value or "\\" in value or value.startswith("/"):
        raise UntrustedFileError(f"{what} ({value[:120]!r}) points outside the folder being "
                                 "imported (an absolute path)")
    path = PurePosixPath(value)
    if any(part in ("..", "") for part in path.parts):
        raise UntrustedFileError(f"{what} ({value[:120]!r}) points outside the folder being "
                                 "imported")
    return path


def untrusted_inside(root: Path, value: Any, what: str) -> Path:
    """`root / value`, refused unless it is a path inside `root` reached through no symlink."""
    root = root.resolve()
    relative = untrusted_relative(value, what)
    path = root.joinpath(*relative.parts)
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise UntrustedFileError(f"{what} ({value[:120]}) is missing") from None
    except (OSError, RuntimeError):
        raise UntrustedFileError(f"{what} ({value[:120]}) cannot be resolved") from None
    if resolved != path or not resolved.is_relative_to(root):
        raise UntrustedFileError(f"{what} ({value[:120]}) goes through a symbolic link; only "
                                 "plain files inside the folder are read")
    return path


def _open_regular(path: Path, what: str, kind: FileKind) -> tuple[int, int]:
    """(descriptor, size) of `path` opened for reading, once it is a regular file within cap."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise UntrustedFileError(f"{what} is missing") from None
    except OSError as error:
        if os.path.islink(path):
            raise UntrustedFileError(f"{what} is a symbolic link; only plain files are "
                                     "read") from None
        raise UntrustedFileError(f"{what} cannot be opened ({error.strerror})") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise UntrustedFileError(f"{what} is {_file_type(status.st_mode)}, not a plain file")
        if status.st_size > kind.limit:
            raise UntrustedFileError(f"{what} is {status.st_size:,} bytes; a {kind.name} is at "
                                     f"most {kind.limit:,} bytes")
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, status.st_size


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "a special file"


def untrusted_read(root: Path, value: Any, *, what: str, kind: FileKind,
                   budget: ImportBudget | None = None) -> bytes:
    """The bytes of the file `value` names inside `root`, within `kind`'s cap and the budget."""
    path = untrusted_inside(root, value, what)
    return untrusted_read_path(path, what=what, kind=kind, budget=budget)


def untrusted_read_path(path: Path, *, what: str, kind: FileKind,
                        budget: ImportBudget | None = None) -> bytes:
    """The bytes of `path` (a file a person named), within `kind`'s cap and the budget."""
    descriptor, size = _open_regular(path, what, kind)
    if budget is not None:
        budget.spend(size, what)
    with os.fdopen(descriptor, "rb") as stream:
        data = stream.read(kind.limit + 1)
    if len(data) > kind.limit:
        raise UntrustedFileError(f"{what} grew over {kind.limit:,} bytes while it was read")
    if budget is not None and len(data) > size:
        budget.spend(len(data) - size, what)
    return data


def untrusted_json(root: Path, value: Any, *, what: str, kind: FileKind = DOCUMENT,
                   budget: ImportBudget | None = None) -> Any:
    """The JSON document `value` names inside `root`."""
    return json_of(untrusted_read(root, value, what=what, kind=kind, budget=budget), what)


def json_of(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise UntrustedFileError(f"{what} is not valid JSON: {str(error)[:200]}") from None


class BoundedStream(io.RawIOBase):
    """A readable, seekable view of a file that refuses to yield more than `limit` bytes per
    pass and more than `line_limit` bytes per line (each seek to 0 starts a new pass)."""

    def __init__(self, stream: IO[bytes], *, what: str, limit: int, line_limit: int) -> None:
        super().__init__()
        self.stream, self.what, self.limit, self.line_limit = stream, what, limit, line_limit
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.position = self.stream.seek(offset, whence)
        return self.position

    def tell(self) -> int:
        return self.position

    def _count(self, data: bytes) -> bytes:
        self.position += len(data)
        if self.position > self.limit:
            raise UntrustedFileError(f"{self.what} is over {self.limit:,} bytes")
        return data

    def read(self, size: int = -1) -> bytes:
        room = self.limit + 1 - self.position
        return self._count(self.stream.read(room if size is None or size < 0 else
                                            min(size, room)))

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def readline(self, size: int | None = -1) -> bytes:
        line = self.stream.readline(self.line_limit + 1)
        if len(line) > self.line_limit:
            raise UntrustedFileError(f"{self.what} has a line over {self.line_limit:,} bytes "
                                     "(no record needs that much)")
        return self._count(line)

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        super().close()
        self.stream.close()


def untrusted_open(path: Path, *, what: str, kind: FileKind = EXCHANGE_FILE,
                   line_limit: int = EXCHANGE_LINE) -> BoundedStream:
    """`path` opened for reading as a BoundedStream (a plain file only, within `kind`'s cap)."""
    descriptor, _ = _open_regular(path, what, kind)
    return BoundedStream(os.fdopen(descriptor, "rb"), what=what, limit=kind.limit,
                         line_limit=line_limit)


def untrusted_stream(stream: IO[bytes], *, what: str, kind: FileKind = EXCHANGE_FILE,
                     line_limit: int = EXCHANGE_LINE) -> BoundedStream:
    """An uploaded file (already a plain file or memory) under the same caps."""
    return BoundedStream(stream, what=what, limit=kind.limit, line_limit=line_limit)
