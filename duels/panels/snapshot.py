"""Import of the original harness's result snapshot as outside outcomes of a panel.

    run.json                         {"models": [{"name"}, ...],
                                      "environments": [{"path", "designer", "domain"}, ...]}
    <path>/harden_01/ (or <path>/)   env.py    the version's class file
                                     run.json  {"seeds": [...], "hint": text, "episodes":
                                                [{"breaker", "status", "episode", "seed",
                                                  "trial", "condition"}, ...]}

A version's folder is `<path>/harden_01` when the panel has that id (the original's hardened
versions), else `<path>` itself. The snapshot is accepted only when every version it lists is on
the panel with the same class file (SHA-256 of env.py), the same benchmark seeds and the same
played hint (`hint`: the first level); the first difference refuses it whole, naming the
version, and nothing is written. `status` success or failure is a result; anything else is kept
as incomplete, never a result. `condition` is `without_hint` (the default) or `with_hint`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from duels.exchange.untrusted import (
    CLASS_FILE,
    DOCUMENT,
    MANIFEST,
    ImportBudget,
    UntrustedFileError,
    json_of,
    untrusted_json,
    untrusted_read,
    untrusted_read_path,
)
from duels.models import OutcomeStatus, OutsideOutcome, Panel, PanelEntry
from duels.panels.errors import PanelError
from duels.panels.manifest import hint_levels
from duels.panels.selectors import panel_entries, panel_evaluated_names
from duels.signals import data_changed

CONDITIONS = {"without_hint": False, "with_hint": True}
TERMINAL = {"success": OutcomeStatus.SUCCESS, "failure": OutcomeStatus.FAILURE}
MAX_EPISODES = 100_000


@dataclass(frozen=True)
class SnapshotPlan:
    """A checked snapshot: the outcome rows it would write (unsaved), nothing written yet."""

    panel: Panel
    rows: list[OutsideOutcome]
    models: list[str]
    versions: int


@dataclass(frozen=True)
class SnapshotReport:
    models: list[str]
    versions: int
    created: int
    skipped: int
    incomplete: int


def snapshot_version(path: str, entries: dict[str, PanelEntry]) -> PanelEntry:
    """The panel entry of the snapshot's environment `path`."""
    for candidate in (f"{path}/harden_01", path):
        if candidate in entries:
            return entries[candidate]
    raise PanelError(f"version {path[:200]}: not on this panel (neither {path[:200]}/harden_01 "
                     "nor itself is one of its ids)")


def version_check(root: Path, entry: PanelEntry, budget: ImportBudget) -> dict:
    """The version's run.json, once its env.py, seeds and hint equal the panel's."""
    source = untrusted_read(root, f"{entry.entry_id}/env.py", what="env.py", kind=CLASS_FILE,
                            budget=budget)
    if hashlib.sha256(source).hexdigest() != entry.source_sha256:
        raise PanelError("env.py differs from the panel's class file (SHA-256 "
                         f"{entry.source_sha256[:12]}…)")
    report = untrusted_json(root, f"{entry.entry_id}/run.json", what="run.json", kind=DOCUMENT,
                            budget=budget)
    if not isinstance(report, dict):
        raise PanelError("run.json is not a JSON object")
    if report.get("seeds") != list(entry.benchmark_seeds):
        raise PanelError(f"seeds {str(report.get('seeds'))[:80]} differ from the panel's "
                         f"benchmark seeds {list(entry.benchmark_seeds)}")
    if report.get("hint") != hint_levels(entry.hints).get(1):
        raise PanelError("hint differs from the panel's first-level hint")
    return report


def outcome_rows(panel: Panel, entry: PanelEntry, report: dict, models: set[str]
                 ) -> list[OutsideOutcome]:
    episodes = report.get("episodes", [])
    if not isinstance(episodes, list):
        raise PanelError("episodes is not a list")
    rows, keys = [], set()
    for number, item in enumerate(episodes, start=1):
        if not isinstance(item, dict):
            raise PanelError(f"episode {number} is not a JSON object")
        breaker = item.get("breaker")
        if breaker not in models:
            continue  # the original ranks only the models its root run.json lists
        status, seed = item.get("status"), item.get("seed")
        episode, trial = item.get("episode", 0), item.get("trial", 0)
        condition = item.get("condition", "without_hint")
        if not isinstance(status, str) or condition not in CONDITIONS or type(seed) is not int \
                or type(episode) is not int or type(trial) is not int:
            raise PanelError(f"episode {number}: status, seed, episode, trial or condition "
                             "is malformed")
        if seed not in entry.benchmark_seeds:
            raise PanelError(f"episode {number}: seed {seed} is not a benchmark seed")
        key = (breaker, CONDITIONS[condition], seed, episode, trial)
        if key in keys:
            raise PanelError(f"episode {number}: {breaker} on seed {seed} ({condition}, trial "
                             f"{trial}) appears twice")
        keys.add(key)
        rows.append(OutsideOutcome(
            panel=panel, entry=entry, model=breaker, hinted=CONDITIONS[condition], seed=seed,
            episode=episode, trial=trial,
            status=TERMINAL.get(status, OutcomeStatus.INCOMPLETE),
            reported_status=status[:40]))
    return rows


def snapshot_check(*, root: Path, panel: Panel) -> SnapshotPlan:
    """Read and check the snapshot at `root` for `panel`, writing nothing; raises PanelError
    naming the version. A model named like a player evaluated here on the panel is refused:
    its outcomes would mix with that player's own plays."""
    root = root.resolve()
    budget = ImportBudget()
    try:
        matrix = json_of(untrusted_read_path(root / "run.json", what="run.json", kind=MANIFEST,
                                             budget=budget), "run.json")
    except UntrustedFileError as error:
        raise PanelError(str(error)) from None
    if not isinstance(matrix, dict) or not isinstance(matrix.get("models"), list) \
            or not isinstance(matrix.get("environments"), list):
        raise PanelError("run.json needs models [{name}] and environments [{path, designer, "
                         "domain}]")
    models = [item.get("name") if isinstance(item, dict) else None for item in matrix["models"]]
    if not models or any(not isinstance(name, str) or not 0 < len(name) <= 100
                         for name in models) or len(set(models)) != len(models):
        raise PanelError("run.json: every model needs a distinct name")
    outside_names_check(panel=panel, names=models, where="run.json")
    entries = {entry.entry_id: entry for entry in panel_entries(panel).defer(
        "class_source", "environment__source")}
    rows: list[OutsideOutcome] = []
    seen: set[str] = set()
    for item in matrix["environments"]:
        path = item.get("path") if isinstance(item, dict) else None
        if not isinstance(path, str) or not path:
            raise PanelError("run.json: an environment has no path")
        entry = snapshot_version(path, entries)
        if entry.entry_id in seen:
            raise PanelError(f"version {entry.entry_id}: listed twice in run.json")
        seen.add(entry.entry_id)
        try:
            rows += outcome_rows(panel, entry, version_check(root, entry, budget), set(models))
        except (PanelError, UntrustedFileError) as error:
            raise PanelError(f"version {entry.entry_id}: {error}") from None
        if len(rows) > MAX_EPISODES:
            raise PanelError(f"the snapshot holds over {MAX_EPISODES} episodes")
    return SnapshotPlan(panel=panel, rows=rows, models=models, versions=len(seen))


def outside_names_check(*, panel: Panel, names: list[str], where: str) -> None:
    """Refuse outside outcomes under the name of a player with plays of its own on `panel`."""
    clashing = sorted(set(names) & panel_evaluated_names(panel=panel))
    if clashing:
        raise PanelError(f"{where}: {', '.join(clashing)} was evaluated here on this panel; "
                         "outside outcomes under the same name would mix with its own plays "
                         "(rename the model in the snapshot)")


def snapshot_import(*, root: Path, panel: Panel) -> SnapshotReport:
    """Import the snapshot at `root` as outside outcomes of `panel`, all or nothing."""
    plan = snapshot_check(root=root, panel=panel)
    return outcomes_write(panel=panel, rows=plan.rows, models=plan.models,
                          versions=plan.versions)


def outcome_key(row: OutsideOutcome) -> tuple[Any, ...]:
    return (row.entry_id, row.model, row.hinted, row.seed, row.episode, row.trial)


def outcomes_write(*, panel: Panel, rows: list[OutsideOutcome], models: list[str],
                   versions: int) -> SnapshotReport:
    """Write the outcomes not stored yet; one stored with another status refuses the import."""
    with transaction.atomic():
        stored = {outcome_key(row): row.status for row in panel.outcomes.all()}
        new = []
        for row in rows:
            status = stored.get(outcome_key(row))
            if status is None:
                new.append(row)
            elif status != row.status:
                raise PanelError(f"version {row.entry.entry_id}: {row.model} on seed {row.seed} "
                                 f"was imported before as {status}, now {row.status}")
        OutsideOutcome.objects.bulk_create(new)
    if new:
        data_changed.send(sender=OutsideOutcome)
    return SnapshotReport(models=models, versions=versions, created=len(new),
                          skipped=len(rows) - len(new),
                          incomplete=sum(row.status == OutcomeStatus.INCOMPLETE for row in new))
