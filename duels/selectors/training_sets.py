"""Curated training sets: the designs most valuable for training, at most N per design cluster.

A design's training value comes from the latest analytics refresh (stored with the joint model's
estimates). Design clusters are the near-duplicate clusters of that refresh's convergence
analysis; a design in no cluster is its own. Each design enters once, represented by its oldest
environment, whose first hint is the design's hint.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.db.models import Q

from duels.models import AnalyticsSnapshot, Duel, Environment, Hint
from duels.selectors.labels import designs_excluded_by_labels

MAX_SET_SIZE = 5000


@dataclass(frozen=True)
class TrainingSetFilters:
    """What a curated set is chosen by; empty values mean no filter."""

    size: int = 50
    per_cluster: int = 1
    author: str = ""  # player name or uuid
    family: str = ""  # the environment's kind
    tournament: UUID | None = None
    round_index: int | None = None  # with `tournament`: designs played in that round
    pass_low: float = 0.0  # band of the design's unhinted pass rate, inclusive
    pass_high: float = 1.0
    # Leave out designs whose adjudicated (or majority) label says broken or hint-leaking.
    exclude_labelled: bool = True


@dataclass(frozen=True)
class TrainingItem:
    """One design of a set, with what a trainer package needs to run and describe it."""

    design: str
    environment: str  # uuid of the representative environment
    title: str
    author: str | None
    family: str
    source: str
    content_hash: str
    max_steps: int | None
    hint: str | None
    cluster: str
    training: dict[str, Any] = field(default_factory=dict)
    # Graded hints (level, text), ascending, the first hint of each level: (1, hint_1), (2, hint_2).
    hint_levels: tuple[tuple[int, str], ...] = ()
    # A study's version (envduels-v1 of a study): its slot and version name, its domain and its
    # stored benchmark seeds; empty outside a study.
    slot: str = ""
    version: str = ""
    domain: str = ""
    benchmark_seeds: tuple[int, ...] | None = None

    @property
    def value(self) -> float:
        return self.training["value"]


def _clusters() -> dict[str, str]:
    """Environment uuid → the name of its convergence cluster in the latest snapshot."""
    snapshot = AnalyticsSnapshot.objects.order_by("-computed_at", "-pk").only("data").first()
    clusters = ((snapshot.data or {}).get("convergence") or {}).get("clusters") if snapshot else []
    return {uuid: f"cluster-{number}" for number, cluster in enumerate(clusters or [], start=1)
            for uuid in cluster.get("environments", ())}


def training_set_check(*, filters: TrainingSetFilters) -> list[str]:
    """What is wrong with `filters`, as sentences a person can act on (empty when fine)."""
    problems = []
    if not 1 <= filters.size <= MAX_SET_SIZE:
        problems.append(f"size must be between 1 and {MAX_SET_SIZE} designs")
    if filters.per_cluster < 1:
        problems.append("at most N per cluster needs N ≥ 1")
    if not 0 <= filters.pass_low <= filters.pass_high <= 1:
        problems.append("the pass-rate band needs 0 ≤ low ≤ high ≤ 1")
    if filters.round_index is not None and filters.tournament is None:
        problems.append("a round needs its tournament")
    return problems


def training_set_select(*, filters: TrainingSetFilters) -> list[TrainingItem]:
    """The best designs by training value under `filters`, highest value first."""
    environments = Environment.objects.filter(estimate__training_value__isnull=False)
    if filters.author:
        by_uuid = Q()
        with contextlib.suppress(ValueError):
            by_uuid = Q(author__uuid=UUID(filters.author))
        environments = environments.filter(Q(author__name=filters.author) | by_uuid)
    if filters.family:
        environments = environments.filter(family__iexact=filters.family)
    if filters.tournament is not None:
        duels = Duel.objects.filter(tournament__uuid=filters.tournament)
        if filters.round_index is not None:
            duels = duels.filter(round_index=filters.round_index)
        environments = environments.filter(
            Q(pk__in=duels.values("env_a")) | Q(pk__in=duels.values("env_b")))
    if filters.exclude_labelled:
        environments = environments.exclude(content_hash__in=list(designs_excluded_by_labels()))
    rows = (environments.order_by("-estimate__training_value", "created_at", "pk")
            .values("pk", "uuid", "title", "author__name", "family", "source", "content_hash",
                    "max_steps", "estimate__training"))
    clusters = _clusters()
    chosen: list[dict] = []
    seen_designs: set[str] = set()
    per_cluster: dict[str, int] = {}
    for row in rows.iterator(chunk_size=2000):
        training = row["estimate__training"] or {}
        design = training.get("design")
        p_unhinted = training.get("p_unhinted")
        if design is None or design in seen_designs or p_unhinted is None:
            continue
        if not filters.pass_low <= p_unhinted <= filters.pass_high:
            continue
        seen_designs.add(design)
        # The design's cluster is that of its oldest environment the convergence analysis saw.
        cluster = next((clusters[uuid] for uuid in training.get("environments", ())
                        if uuid in clusters), design)
        if per_cluster.get(cluster, 0) >= filters.per_cluster:
            continue
        per_cluster[cluster] = per_cluster.get(cluster, 0) + 1
        chosen.append({**row, "cluster": cluster, "training": training})
        if len(chosen) >= filters.size:
            break
    hints: dict[int, str] = {}
    levels: dict[int, dict[int, str]] = {}
    for environment_id, text, level in (
            Hint.objects.filter(environment__in=[r["pk"] for r in chosen])
            .order_by("-pk").values_list("environment_id", "text", "level")):
        hints[environment_id] = text  # the first hint wins: rows come newest first
        levels.setdefault(environment_id, {})[level] = text
    return [
        TrainingItem(design=row["training"]["design"], environment=str(row["uuid"]),
                     title=row["title"], author=row["author__name"], family=row["family"],
                     source=row["source"], content_hash=row["content_hash"],
                     max_steps=row["max_steps"], hint=hints.get(row["pk"]),
                     cluster=row["cluster"], training=row["training"],
                     hint_levels=tuple(sorted(levels.get(row["pk"], {}).items())))
        for row in chosen
    ]
