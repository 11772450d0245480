"""The one reader of imported files and the identifier rules, tried with generated inputs:
every combination of path parts either stays inside the root or is refused, every look-alike
of a valid id is refused, and special files are refused on the opened descriptor."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest

from duels.exchange.identifiers import (
    IdentifierError,
    entry_id_check,
    path_under,
    slot_check,
)
from duels.exchange.untrusted import (
    SOURCE,
    FileKind,
    ImportBudget,
    UntrustedFileError,
    untrusted_read,
    untrusted_read_path,
)
from tests.duels.exchange.hostile.inputs import fifo_watchdog

PARTS = ("a", "..", ".", "", "/", "b", "link", "\\", "..\\", "%2e%2e", "\x00", "c.py")
VALID_IDS = ("environments/alpha-7b/env_001/harden_01", "environments/Qwen3.5-27B/env_010",
             "environments/a/env_123456/harden_002/0123456789ab",
             "environments/beta_70b/env_002/harden_01/deadbeef")
CONFUSABLES = {"e": "\u0435", "a": "\u0430", "o": "\u043e", "-": "\u2011", "/": "\u2215",
               "0": "\uff10", "1": "\u0661", "_": "\uff3f", "b": "\u0184", ".": "\u2024"}


@pytest.fixture
def tree(tmp_path):
    """root/ with a file, a folder, a link to a file outside and a link to a folder outside."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "c.py").write_text("inside")
    (root / "b" / "c.py").write_text("inside too")
    (outside / "c.py").write_text("SECRET")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "b" / "link").symlink_to(outside / "c.py")
    return root


def generated_paths(count=3000, seed=54):
    generator = random.Random(seed)
    for length in (1, 2, 3):
        yield from ("/".join(parts) for parts in itertools.product(PARTS, repeat=length))
    for _ in range(count):
        yield "/".join(generator.choice(PARTS) for _ in range(generator.randint(1, 6)))


def test_every_generated_path_is_read_inside_the_root_or_refused(tree):
    read = refused = 0
    for value in generated_paths():
        try:
            data = untrusted_read(tree, value, what="path", kind=SOURCE)
        except UntrustedFileError:
            refused += 1
            continue
        read += 1
        assert data != b"SECRET", value
        resolved = (tree / value).resolve()
        assert resolved.is_relative_to(tree) and not any(
            (tree / Path(*Path(value).parts[:n])).is_symlink()
            for n in range(1, len(Path(value).parts) + 1)), value
    assert read and refused > read


def test_every_generated_path_written_stays_under_the_root(tmp_path):
    root = tmp_path / "out"
    root.mkdir()
    for value in generated_paths(count=1000, seed=7):
        try:
            path = path_under(root, value)
        except IdentifierError:
            continue
        assert path.resolve().is_relative_to(root.resolve()), value
        assert ".." not in path.relative_to(root).parts


@pytest.mark.parametrize("valid", VALID_IDS)
def test_every_look_alike_of_a_valid_id_is_refused(valid):
    assert entry_id_check(valid) == valid
    for position, character in enumerate(valid):
        for swapped in (CONFUSABLES.get(character), "\u200b" + character, character + "\n"):
            if swapped is not None:
                with pytest.raises(IdentifierError):
                    entry_id_check(valid[:position] + swapped + valid[position + 1:])


def test_ids_and_slots_built_from_hostile_parts_are_refused():
    tried = 0
    for hostile in generated_paths(count=500, seed=11):
        if all(part in ("a", "b", "link", "c.py") for part in hostile.split("/")):
            continue  # plain parts: a well-formed name
        tried += 1
        for candidate in (f"environments/{hostile}/env_001",
                          f"environments/a/env_001/{hostile}", f"{hostile}/environments/a/env_001"):
            with pytest.raises(IdentifierError):
                entry_id_check(candidate)
        if hostile:  # a blank slot means "no slot"
            with pytest.raises(IdentifierError):
                slot_check(hostile)
    assert tried > 400


def test_special_files_are_refused_on_the_descriptor(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with fifo_watchdog(fifo), pytest.raises(UntrustedFileError, match="a FIFO"):
        untrusted_read_path(fifo, what="fifo", kind=SOURCE)
    with pytest.raises(UntrustedFileError, match="a character device"):
        untrusted_read_path(Path("/dev/zero"), what="zero", kind=SOURCE)
    with pytest.raises(UntrustedFileError, match="a folder"):
        untrusted_read_path(tmp_path, what="folder", kind=SOURCE)
    (tmp_path / "link").symlink_to("/dev/zero")
    with pytest.raises(UntrustedFileError, match="symbolic link"):
        untrusted_read_path(tmp_path / "link", what="link", kind=SOURCE)


def test_the_cap_holds_and_duplicates_count_against_the_budget(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 1000)
    kind = FileKind("test", 1000)
    assert untrusted_read(tmp_path, "f", what="f", kind=kind) == b"x" * 1000
    with pytest.raises(UntrustedFileError, match="at most 999 bytes"):
        untrusted_read(tmp_path, "f", what="f", kind=FileKind("test", 999))
    budget = ImportBudget(limit=4500)
    for _ in range(4):
        untrusted_read(tmp_path, "f", what="f", kind=kind, budget=budget)
    with pytest.raises(UntrustedFileError, match="every file counted each time"):
        untrusted_read(tmp_path, "f", what="f", kind=kind, budget=budget)
