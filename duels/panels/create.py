"""Making a panel from what is stored: a study's final versions, or a selection of designs.

Each version is frozen as it stands: its benchmark seeds, its hints by level, its author and
domain, and the envduels-v1 class file it leaves EnvDuels as (for one of EnvDuels' own designs,
the file the envduels-v1 export writes; for an imported class, its own bytes). The same
versions, seeds and hints make the same manifest, so making a panel twice gives the one panel.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from duels.models import (
    Contract,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Panel,
    PanelEntry,
    PanelOrigin,
    Study,
)
from duels.panels.errors import PanelError
from duels.panels.manifest import ManifestRow, hints_mapping, manifest_sha256
from duels.signals import data_changed
from duels.trainers.envduels_v1 import (
    CLASS_NAME,
    SHORT_HASH,
    author_slug,
    design_class_file,
)

MIN_DESIGN_PREFIX = 6


@dataclass(frozen=True)
class Frozen:
    """One version about to be written into a panel."""

    row: ManifestRow
    environment: Environment
    class_source: str
    hints: dict[int, Hint]


def environment_seeds(environment: Environment) -> list[int]:
    """Its benchmark seeds, else the seeds its duels played (ascending)."""
    if environment.benchmark_seeds:
        return [int(seed) for seed in environment.benchmark_seeds]
    return sorted(set(Episode.objects.filter(environment=environment, duel__isnull=False)
                      .values_list("seed", flat=True)))


def environment_hints(environment: Environment) -> dict[int, Hint]:
    """Its hints by level (1 and 2); the setter's own hint first, else the earliest."""
    chosen: dict[int, Hint] = {}
    hints = sorted(environment.hints.filter(level__in=(1, 2)),
                   key=lambda hint: (hint.author_id != environment.author_id, hint.created_at,
                                     hint.id))
    for hint in hints:
        chosen.setdefault(hint.level, hint)
    return chosen if 1 in chosen else {}  # a graded hint without its first level is not one


def version_freeze(environment: Environment, env_id: str) -> Frozen:
    seeds = environment_seeds(environment)
    if not seeds:
        raise PanelError(f"{env_id}: the environment has no benchmark seeds and no duel "
                         "played it; play it first")
    hints = environment_hints(environment)
    if environment.contract == Contract.ENVDUELS_V1:
        class_source, class_name = environment.source, environment.class_name
    else:
        class_source, class_name = design_class_file(
            source=environment.source, env_id=env_id, content_hash=environment.content_hash,
            max_steps=environment.max_steps), CLASS_NAME
    author = environment.author.name if environment.author_id else None
    row = ManifestRow(
        id=env_id, author=author, domain=(environment.domain_or_family or "general")[:60],
        split="", source_sha256=hashlib.sha256(class_source.encode("utf-8")).hexdigest(),
        class_name=class_name, max_turns=int(environment.max_steps or 30),
        benchmark_seeds=tuple(seeds),
        hints=hints_mapping({level: hint.text for level, hint in hints.items()}))
    return Frozen(row=row, environment=environment, class_source=class_source, hints=hints)


def study_final_versions(study: Study) -> list[Environment]:
    """Each slot's final version: its last valid revision, slots in author and slot order."""
    finals: dict[tuple[Any, str], Environment] = {}
    versions = (Environment.objects.filter(study=study, status=EnvironmentStatus.VALID)
                .select_related("author").order_by("author__name", "slot", "revision"))
    for environment in versions:
        finals[(environment.author_id, environment.slot)] = environment
    return list(finals.values())


def study_version_id(environment: Environment) -> str:
    """`environments/<author>/env_003/harden_01`, as the original harness names its versions."""
    author = author_slug(environment.author.name if environment.author_id else None)
    return f"environments/{author}/{environment.version or environment.content_hash[:SHORT_HASH]}"


def panel_from_study(*, study: Study, name: str, user: Any = None) -> tuple[Panel, bool]:
    versions = study_final_versions(study)
    if not versions:
        raise PanelError(f"study {study.name} has no valid version yet")
    frozen = [version_freeze(environment, study_version_id(environment))
              for environment in versions]
    return panel_write(frozen=frozen, name=name, origin=PanelOrigin.STUDY, study=study, user=user)


def design_environment(prefix: str) -> Environment:
    """The latest valid environment of the one design whose hash starts with `prefix`."""
    prefix = prefix.strip().lower()
    if len(prefix) < MIN_DESIGN_PREFIX:
        raise PanelError(f"design {prefix!r}: give at least {MIN_DESIGN_PREFIX} characters of "
                         "its hash")
    candidates = Environment.objects.filter(content_hash__startswith=prefix,
                                            status=EnvironmentStatus.VALID)
    designs = set(candidates.values_list("content_hash", flat=True)[:2])
    if len(designs) != 1:
        raise PanelError(f"design {prefix}: " + ("no valid design has such a hash" if not designs
                                                 else "the prefix names several designs"))
    return candidates.select_related("author").order_by("-created_at", "-id").first()


def panel_from_designs(*, hashes: Iterable[str], name: str, user: Any = None
                       ) -> tuple[Panel, bool]:
    environments = [design_environment(prefix) for prefix in hashes]
    if not environments:
        raise PanelError("name at least one design")
    if len({environment.content_hash for environment in environments}) != len(environments):
        raise PanelError("a design is named twice")
    counters: dict[str, int] = {}
    frozen = []
    for environment in environments:
        author = author_slug(environment.author.name if environment.author_id else None)
        counters[author] = counters.get(author, 0) + 1
        frozen.append(version_freeze(environment, f"environments/{author}/"
                                     f"env_{counters[author]:03d}/"
                                     f"{environment.content_hash[:SHORT_HASH]}"))
    return panel_write(frozen=frozen, name=name, origin=PanelOrigin.DESIGNS, user=user)


def panel_write(*, frozen: list[Frozen], name: str, origin: str, study: Study | None = None,
                user: Any = None) -> tuple[Panel, bool]:
    """Write a panel of `frozen` versions (or return the one with the same manifest)."""
    if not name.strip():
        raise PanelError("a panel needs a name (--name)")
    digest = manifest_sha256(item.row for item in frozen)
    existing = Panel.objects.filter(manifest_sha256=digest).first()
    if existing is not None:
        return existing, False
    with transaction.atomic():
        panel = Panel.objects.create(name=name.strip()[:200], manifest_sha256=digest,
                                     origin=origin, study=study, created_by=user)
        PanelEntry.objects.bulk_create(PanelEntry(
            panel=panel, position=position, entry_id=item.row.id,
            environment=item.environment, author=item.row.author or "",
            domain=item.row.domain, split=item.row.split, class_source=item.class_source,
            source_sha256=item.row.source_sha256, class_name=item.row.class_name,
            max_turns=item.row.max_turns, benchmark_seeds=list(item.row.benchmark_seeds),
            hints=item.row.hints, hint_1=item.hints.get(1), hint_2=item.hints.get(2))
            for position, item in enumerate(frozen))
    data_changed.send(sender=Panel)
    return panel, True
