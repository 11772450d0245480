"""Which designs `serve_envs` plays: a curated training set, designs named by hash, or the
designs of an envduels-v1 export (so a replica needs no database)."""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from duels.exchange.trainers.common import PackageError
from duels.exchange.trainers.openenv_server import ServedDesign
from duels.models import Environment, EnvironmentStatus
from duels.selectors.training_sets import TrainingItem

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


def _design_source(code: bytes, class_name: str) -> str:
    """DESIGN_SOURCE of the generated class in an envduels-v1 class file (read, never run)."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for statement in node.body:
                if (isinstance(statement, ast.Assign)
                        and [getattr(t, "id", "") for t in statement.targets] == ["DESIGN_SOURCE"]):
                    return ast.literal_eval(statement.value)
    raise PackageError(f"{class_name} has no DESIGN_SOURCE: not an EnvDuels envduels-v1 class")


def served_designs_from_export(*, root: Path) -> list[ServedDesign]:
    """The designs of an envduels-v1 export EnvDuels wrote; hashes are checked."""
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PackageError(f"{root} is not an envduels-v1 export: {error}") from error
    if manifest.get("format_version") != 1:
        raise PackageError(f"{root}/manifest.json is not format_version 1")
    designs = []
    for row in manifest.get("environments", []):
        path = (root / row["source"]).resolve()
        if not path.is_relative_to(root.resolve()):
            raise PackageError(f"{row['id']}: its source path leaves the export")
        code = path.read_bytes()
        if hashlib.sha256(code).hexdigest() != row["source_sha256"]:
            raise PackageError(f"{row['id']}: {row['source']} does not match its source_sha256")
        designs.append(ServedDesign(id=row.get("design") or row["id"],
                                    source=_design_source(code, row["class_name"]),
                                    title=str(row.get("title") or ""),
                                    max_steps=int(row.get("max_turns") or DEFAULT_MAX_STEPS)))
    if not designs:
        raise PackageError(f"{root}/manifest.json lists no environment")
    return designs
