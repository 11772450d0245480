"""Which designs `serve_envs` plays: a curated training set, designs named by hash, or the
designs of an envduels-v1 export (so a replica needs no database)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from duels.exchange.untrusted import (
    CLASS_FILE,
    MANIFEST,
    ImportBudget,
    UntrustedFileError,
    json_of,
    untrusted_read,
    untrusted_read_path,
)
from duels.models import Environment, EnvironmentStatus
from duels.selectors.training_sets import TrainingItem
from duels.trainers.common import PackageError
from duels.trainers.envduels_v1 import generated_design
from duels.trainers.openenv_server import ServedDesign

DEFAULT_MAX_STEPS = 30


def served_designs_from_set(*, items: Sequence[TrainingItem]) -> list[ServedDesign]:
    """The designs of a training set, in its order; ids are design hashes."""
    return [ServedDesign(id=item.design, source=item.source, title=item.title,
                         max_steps=int(item.max_steps or DEFAULT_MAX_STEPS)) for item in items]


def served_designs_from_hashes(*, prefixes: Sequence[str]) -> list[ServedDesign]:
    """One design per hash prefix (its oldest valid environment); an unknown or ambiguous
    prefix is an error naming it."""
    designs = []
    for prefix in prefixes:
        found = (Environment.objects.filter(content_hash__startswith=prefix.lower(),
                                            status=EnvironmentStatus.VALID)
                 .order_by("created_at", "pk"))
        hashes = set(found.values_list("content_hash", flat=True)[:50])
        if len(hashes) != 1:
            raise PackageError(f"design {prefix!r} matches {len(hashes)} valid designs; give "
                               "more of its hash (the environment page shows it)")
        env = found.first()
        designs.append(ServedDesign(id=env.content_hash, source=env.source, title=env.title,
                                    max_steps=int(env.max_steps or DEFAULT_MAX_STEPS)))
    return designs


def _design_source(code: bytes, class_name: str, env_id: str) -> str:
    """DESIGN_SOURCE of a class file EnvDuels generated (read, never run): only a file that is
    exactly what this EnvDuels generates from that design (duels/panels/v1_read.py)."""
    try:
        text = code.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    source, _ = generated_design(text, class_name)
    if source is None:
        raise PackageError(f"{env_id}: {class_name} is not a class this EnvDuels generated "
                           "(its runtime or its design differs); serve it from the installation "
                           "that wrote it")
    return source


def served_designs_from_export(*, root: Path) -> list[ServedDesign]:
    """The designs of an envduels-v1 export EnvDuels wrote, read through the untrusted-file
    reader (plain files inside the export, within their caps); hashes are checked."""
    budget = ImportBudget()
    try:
        manifest = json_of(untrusted_read_path(root / "manifest.json", what="manifest.json",
                                               kind=MANIFEST, budget=budget), "manifest.json")
    except UntrustedFileError as error:
        raise PackageError(f"{root} is not an envduels-v1 export: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format_version") != 1:
        raise PackageError(f"{root}/manifest.json is not format_version 1")
    designs = []
    for row in manifest.get("environments", []):
        env_id = str(row.get("id"))[:200] if isinstance(row, dict) else "a row"
        try:
            code = untrusted_read(root, row.get("source"), what=f"{env_id}: source",
                                  kind=CLASS_FILE, budget=budget)
        except (UntrustedFileError, AttributeError) as error:
            raise PackageError(str(error)) from None
        if hashlib.sha256(code).hexdigest() != row["source_sha256"]:
            raise PackageError(f"{row['id']}: {row['source']} does not match its source_sha256")
        designs.append(ServedDesign(id=row.get("design") or row["id"],
                                    source=_design_source(code, row["class_name"], env_id),
                                    title=str(row.get("title") or ""),
                                    max_steps=int(row.get("max_turns") or DEFAULT_MAX_STEPS)))
    if not designs:
        raise PackageError(f"{root}/manifest.json lists no environment")
    return designs
