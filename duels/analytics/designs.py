"""Designs: copies of one source are one item.

Environments whose sources are the same once line endings and trailing whitespace are normalised
share one design, keyed by `content_hash`; this module is the one place that rule lives (the model
stores the hash, the flywheel and training values group by it). The joint model's items, the
hint-gain rows and the convergence test count designs, not rows: a design's copies pool their
episodes under the first copy's uuid (the design's address), so its difficulty rests on all of its
data. Duel scoring keeps each duel's own environments.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeVar

if TYPE_CHECKING:  # the model imports this module at start-up; the records only name types here
    from duels.analytics.data import EnvironmentRecord, EpisodeRecord

Item = TypeVar("Item")


def design_source(source: str) -> str:
    """The source as a design sees it: line endings as `\\n`, no trailing whitespace on any
    line, no blank lines at the end. Copies that differ only in these are one design."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip("\n")


def content_hash(source: str) -> str:
    """SHA-256 of the design source: the design's identity, the same in every installation."""
    return hashlib.sha256(design_source(source).encode("utf-8", "surrogatepass")).hexdigest()


def designs_group(items: Iterable[Item], *, source: Callable[[Item], str]) -> dict[str, list[Item]]:
    """Items grouped by the design of `source(item)`, in first-seen order within each design."""
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[content_hash(source(item))].append(item)
    return dict(groups)


class DesignRecords(NamedTuple):
    environments: tuple[EnvironmentRecord, ...]
    episodes: tuple[EpisodeRecord, ...]
    # Every environment uuid to its design's uuid (the first copy's).
    design_of: dict[str, str]


def design_records(
    *, environments: Sequence[EnvironmentRecord], episodes: Sequence[EpisodeRecord]
) -> DesignRecords:
    """One record per design, in the order of first copies, and the episodes moved onto it.

    `environments` come in storage order (primary key), so the first record of a content hash is
    the first copy: it gives the design its uuid, title and author. `authors` lists every copy's
    author in order of first appearance, hints are pooled, and a design is valid when any copy
    validated.
    """
    first_of_hash: dict[str, str] = {}
    design_of: dict[str, str] = {}
    merged: dict[str, dict] = {}
    for env in environments:
        key = env.content_hash or env.uuid
        design = first_of_hash.setdefault(key, env.uuid)
        design_of[env.uuid] = design
        entry = merged.setdefault(design, {"record": env, "authors": [], "hints": [],
                                           "valid": False})
        if env.author is not None and env.author not in entry["authors"]:
            entry["authors"].append(env.author)
        entry["hints"].extend(hint for hint in env.hints if hint not in entry["hints"])
        entry["valid"] = entry["valid"] or env.valid
    designs = tuple(
        entry["record"]._replace(authors=tuple(entry["authors"]), hints=tuple(entry["hints"]),
                                 valid=entry["valid"])
        for entry in merged.values()
    )
    moved = tuple(
        episode._replace(environment=design_of.get(episode.environment, episode.environment))
        for episode in episodes
    )
    return DesignRecords(environments=designs, episodes=moved, design_of=design_of)


def design_label(*, title: str, authors: Sequence[str | None], content_hash: str,
                 width: int = 40) -> str:
    """How charts and lists name a design: title (cut at `width`), author(s) and the short
    content hash."""
    names = [name for name in dict.fromkeys(authors) if name] or ["a person"]
    cut = title if len(title) <= width else title[:width - 1] + "…"
    return f"{cut} · {', '.join(names)}" + (f" · {content_hash[:6]}" if content_hash else "")
