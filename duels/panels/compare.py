"""Two evaluations of one panel side by side (a checkpoint before and after training): per
version the change in unhinted and hinted pass rate with its interval, and the transfer figure
(duels/analytics/transfer.py) fed from those measured changes instead of a hand-made CSV.

The learner is the earlier checkpoint: its hint gain on a version (from its own plays) is set
against how much its unhinted pass rate there rose in the later one.
"""

from __future__ import annotations

from collections import defaultdict

from duels.analytics.data import EpisodeRecord, TransferRecord
from duels.analytics.proportions import newcombe_difference
from duels.analytics.transfer import transfer_fit, transfer_points
from duels.models import DONE_STATUSES, Condition, EnvironmentStatus, Episode, Evaluation
from duels.panels.errors import PanelError
from duels.scoring import episode_decided, episode_passed

CONDITIONS = (("unhinted", Condition.UNHINTED), ("hinted", Condition.HINTED))


def _decided(evaluation: Evaluation) -> list[tuple[int, str, int, bool]]:
    """(environment id, condition, seed, passed) of the evaluation's decided plays."""
    return [(environment_id, condition, seed, episode_passed(status=status, success=success))
            for environment_id, condition, seed, status, end_reason, success in
            Episode.objects.filter(evaluation=evaluation, status__in=DONE_STATUSES)
            .values_list("environment_id", "condition", "seed", "status", "end_reason",
                         "success")
            if episode_decided(status=status, end_reason=end_reason)]


def _tallies(plays) -> dict[tuple[int, str], list[int]]:
    """(environment id, condition) -> [passed, decided]."""
    tallies: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for environment_id, condition, _, passed in plays:
        cell = tallies[(environment_id, condition)]
        cell[0] += passed
        cell[1] += 1
    return tallies


def _rate(cell: list[int] | None) -> dict:
    passed, decided = cell or (0, 0)
    return {"successes": passed, "attempted": decided,
            "accuracy": passed / decided if decided else None}


def _change(before: list[int] | None, after: list[int] | None) -> tuple:
    if not before or not after or not before[1] or not after[1]:
        return None, None
    change = after[0] / after[1] - before[0] / before[1]
    return change, list(newcombe_difference(after[0], after[1], before[0], before[1]))


def evaluations_compare(*, before: Evaluation, after: Evaluation) -> dict:
    """{"before", "after", "panel", "environments": [per version: id, uuid, author, domain,
    before/after pass rates per condition, unhinted_change and hinted_change with their
    intervals], "overall": {the same pooled}, "transfer": {"spearman", "low", "high",
    "partial_spearman", "n"} or None}."""
    if before.panel_id != after.panel_id:
        raise PanelError("the two evaluations are of different panels: compare evaluations of "
                         "one panel")
    if before.pk == after.pk:
        raise PanelError("choose two different evaluations")
    learner = _decided(before)
    tallies = {"before": _tallies(learner), "after": _tallies(_decided(after))}
    rows, pooled = [], {side: defaultdict(lambda: [0, 0]) for side in tallies}
    transfers = []
    entries = (before.panel.entries.select_related("environment").order_by("position"))
    for entry in entries:
        if entry.environment.status != EnvironmentStatus.VALID:
            continue
        key = entry.environment_id
        row = {"id": entry.entry_id, "uuid": str(entry.environment.uuid),
               "author": entry.author or None, "domain": entry.domain}
        for side in tallies:
            row[side] = {name: _rate(tallies[side].get((key, condition)))
                         for name, condition in CONDITIONS}
            for name, condition in CONDITIONS:
                cell = tallies[side].get((key, condition))
                if cell:
                    pooled[side][name][0] += cell[0]
                    pooled[side][name][1] += cell[1]
        for name, condition in CONDITIONS:
            change, interval = _change(tallies["before"].get((key, condition)),
                                       tallies["after"].get((key, condition)))
            row[f"{name}_change"], row[f"{name}_change_interval"] = change, interval
        rows.append(row)
        if row["unhinted_change"] is not None:
            transfers.append(TransferRecord(
                before.player.name, row["uuid"], None, f"panel {before.panel.name}",
                row["before"]["unhinted"]["accuracy"], row["after"]["unhinted"]["accuracy"]))
    overall = {}
    for name, _ in CONDITIONS:
        change, interval = _change(pooled["before"].get(name), pooled["after"].get(name))
        overall[name] = {"before": _rate(pooled["before"].get(name)),
                         "after": _rate(pooled["after"].get(name)),
                         "change": change, "change_interval": interval}
    uuids = {entry.environment_id: str(entry.environment.uuid) for entry in entries}
    episodes = [EpisodeRecord(None, uuids[environment_id], before.player.name,
                              condition == Condition.HINTED, seed, passed)
                for environment_id, condition, seed, passed in learner
                if environment_id in uuids]
    fit = transfer_fit(rows=transfer_points(transfers=transfers, episodes=episodes,
                                            environments=[]))
    return {"panel": str(before.panel.uuid),
            "before": {"evaluation": str(before.uuid), "player": before.player.name},
            "after": {"evaluation": str(after.uuid), "player": after.player.name},
            "hint_level": before.hint_level, "environments": rows, "overall": overall,
            "transfer": fit}
