"""Designs: environments whose sources are the same once line endings and trailing whitespace
are normalised share one design.

This module is the one place the flywheel, training values and training sets learn which design
an environment belongs to; everything else groups by `design_key`.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TypeVar

_TRAILING_SPACE = re.compile(r"[ \t\f\v]+$", re.M)

Item = TypeVar("Item")


def design_source(source: str) -> str:
    """The source as its design sees it: LF line ends, no trailing whitespace on any line."""
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    return _TRAILING_SPACE.sub("", text).rstrip("\n") + "\n"


def design_key(source: str) -> str:
    """The design's identity: SHA-256 of the normalised source (hex)."""
    return hashlib.sha256(design_source(source).encode("utf-8", "surrogatepass")).hexdigest()


def designs_group(items: Iterable[Item], *, source: Callable[[Item], str]) -> dict[str, list[Item]]:
    """Items grouped by the design of `source(item)`, in first-seen order within each design."""
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[design_key(source(item))].append(item)
    return dict(groups)
