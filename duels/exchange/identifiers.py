"""Identifiers that come from files, checked where they enter, and paths built from them.

One pattern per kind of identifier, ASCII only (a look-alike letter from another script is
refused, not folded), so that every path EnvDuels later writes from them is a plain relative path
under its root. `path_under` builds such a path and checks it once more, so even a row stored
before these checks existed cannot make an export write outside its folder.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

# An author's folder in an envduels-v1 id (author_slug writes lower case; the original's
# harness keeps the model's own spelling).
AUTHOR_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
# A study slot, as a study names it: env_001 (DESIGN.md, "version").
SLOT_PATTERN = re.compile(r"^env_[0-9]{3,6}\Z")
# environments/<author>/env_NNN[/harden_NN][/<short hash>]: the original harness's versions and
# the ids EnvDuels' own exports write.
ENTRY_ID_PATTERN = re.compile(
    rf"^environments/{AUTHOR_SEGMENT}/env_[0-9]{{3,6}}(/harden_[0-9]{{2,3}})?(/[0-9a-f]{{6,64}})?\Z")
ENTRY_ID_RULE = ("an id is environments/<author>/env_NNN[/harden_NN][/<short hash>] (ASCII "
                 "letters, digits, '.', '-' and '_' in the author)")
SLOT_RULE = "a slot is env_ and three to six digits, e.g. env_003"


class IdentifierError(ValueError):
    """An identifier or a path built from one breaks its rule; the message says which."""


def entry_id_check(value: object) -> str:
    """`value` when it is an envduels-v1 entry id, else IdentifierError."""
    if not isinstance(value, str) or not ENTRY_ID_PATTERN.match(value):
        raise IdentifierError(f"id {str(value)[:120]!r} is refused: {ENTRY_ID_RULE}")
    return value


def slot_check(value: object) -> str:
    """`value` when it is a study slot (or blank), else IdentifierError."""
    if value == "":
        return ""
    if not isinstance(value, str) or not SLOT_PATTERN.match(value):
        raise IdentifierError(f"slot {str(value)[:60]!r} is refused: {SLOT_RULE}")
    return value


def path_under(root: Path, relative: str) -> Path:
    """`root / relative` for a relative path of plain parts, refused (IdentifierError) when it
    would leave `root` (absolute, `..`, empty or dot parts, backslashes, NUL)."""
    parts = PurePosixPath(relative).parts if isinstance(relative, str) else ()
    if not parts or "\x00" in relative or "\\" in relative or relative.startswith("/") or any(
            part in ("", ".", "..") for part in parts):
        raise IdentifierError(f"path {str(relative)[:120]!r} would leave the folder being written")
    path = root.joinpath(*parts)
    if not path.resolve().is_relative_to(root.resolve()):
        raise IdentifierError(f"path {relative[:120]!r} would leave the folder being written")
    return path
