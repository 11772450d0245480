"""Reads that feed the analytics: one pass over the database, a constant number of queries."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from datetime import datetime
from decimal import Decimal
from typing import NamedTuple

from django.db import connection
from django.db.models import OuterRef, Q, Subquery

from duels.analytics.data import (
    AnalyticsInput,
    DuelRecord,
    EnvironmentRecord,
    EpisodeRecord,
    TransferRecord,
)
from duels.engine.validation import report_check_passed, report_reference_solved
from duels.models import (
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Player,
    Status,
    Step,
    TransferResult,
)
from duels.scoring import episode_passed
from duels.selectors.compliance import format_error_counts

CHUNK = 5000


def analytics_input(*, excluding: Collection[str] = ()) -> AnalyticsInput:
    """Finished duels and episodes, environments, hints and transfer results as plain records.

    Duels are read before episodes: a duel is marked finished only after all its episodes are
    stored, so every duel read here finds its episodes even while the engine keeps writing.
    `excluding` (content hashes) reads the data as if those designs had never been stored:
    without their environments, hints, transfer results, any duel that played one of them and
    every episode and step of those.
    """
    player_names = dict(Player.objects.values_list("id", "name"))
    gone = _excluded(excluding)
    duels = []
    # Every duel, oldest first: finished ones are the analytics' duels, and the first duel that
    # played an environment gives the flywheel its period.
    periods: dict[int, str] = {}
    for (key, duel_uuid, a_id, b_id, env_a_id, env_b_id, forfeit_a, forfeit_b, void_a, void_b,
         observe, status, tournament, round_index, created) in Duel.objects.exclude(
            gone.duels).order_by("created_at", "id").values_list(
            "id", "uuid", "a_id", "b_id", "env_a_id", "env_b_id", "forfeit_a", "forfeit_b",
            "void_a", "void_b", "observe", "status", "tournament__name", "round_index",
            "created_at",
    ).iterator(chunk_size=CHUNK):
        label = duel_period(tournament=tournament, round_index=round_index, created=created)
        for env_id in (env_a_id, env_b_id):
            if env_id is not None:
                periods.setdefault(env_id, label)
        if status == Status.FINISHED:
            duels.append((key, str(duel_uuid), player_names[a_id], player_names[b_id],
                          env_a_id, env_b_id, observe, bool(forfeit_a), bool(forfeit_b),
                          bool(void_a), bool(void_b)))
    duels.sort()
    hints: dict[int, list[str]] = defaultdict(list)
    for environment_id, text in Hint.objects.exclude(gone.environments).values_list(
        "environment_id", "text"
    ).iterator(chunk_size=CHUNK):
        hints[environment_id].append(text)
    first_reset = Step.objects.filter(episode__environment=OuterRef("pk"), index=0).exclude(
        gone.step_episodes).order_by(
        "episode_id").values("observation")[:1]
    environment_uuid: dict[int, str] = {}
    voided_ids: set[int] = set()
    environments = []
    # In storage order: the first row of a content hash is its design's first copy.
    for (env_id, env_uuid, title, author_id, status, source, reset_text, design_hash, report,
         created) in (
        Environment.objects.exclude(gone.designs).order_by("id")
        .annotate(reset_text=Subquery(first_reset))
        .values_list("id", "uuid", "title", "author_id", "status", "source", "reset_text",
                     "content_hash", "validation", "created_at")
        .iterator(chunk_size=CHUNK)
    ):
        environment_uuid[env_id] = str(env_uuid)
        voided = status == EnvironmentStatus.INVALID and bool((report or {}).get("after_play"))
        if voided:
            voided_ids.add(env_id)
        # Never validated here (an import without a report) is not invalid: only a recorded
        # failed validation excludes an environment from the solver figures.
        environments.append(EnvironmentRecord(
            str(env_uuid), title, player_names.get(author_id), status != EnvironmentStatus.INVALID,
            source, tuple(hints.get(env_id, ())), reset_text or "", design_hash,
            validated=status != EnvironmentStatus.PENDING and bool(report),
            # Reports made before step-by-step comparison name the reset-only check.
            deterministic=(report_check_passed(report, "deterministic")
                           or report_check_passed(report, "reset_deterministic")),
            reference_solved=report_reference_solved(report),
            period=periods.get(env_id) or week_period(created), created_at=created.isoformat(),
            voided=voided,
        ))

    # Played, forfeited or voided comes from each duel's own record (forfeit and void flags +
    # episodes), never from an environment's status now.
    duel_records = tuple(
        DuelRecord(key, uuid, a, b, environment_uuid.get(env_a), environment_uuid.get(env_b),
                   observe, forfeit_a, forfeit_b, void_a, void_b)
        for key, uuid, a, b, env_a, env_b, observe, forfeit_a, forfeit_b, void_a, void_b in duels
    )
    duel_keys = {duel.key for duel in duel_records}
    # Every episode of a finished duel counts (an environment fault is "not passed", as the
    # engine scores it); outside duels, only episodes that ended normally. None of an
    # environment voided after play counts anywhere.
    # Study and panel plays have their own pages and figures: these are the duels' analytics.
    outside_duels = Q(duel__isnull=True, study__isnull=True, evaluation__isnull=True,
                      status=Status.FINISHED, success__isnull=False)
    counted = Episode.objects.filter(
        Q(duel__status=Status.FINISHED) | outside_duels).exclude(gone.episodes).exclude(
        environment_id__in=voided_ids)
    episodes = tuple(
        EpisodeRecord(duel_id if duel_id in duel_keys else None, environment_uuid[env_id],
                      player_names[solver_id], condition == Condition.HINTED, seed,
                      episode_passed(status=status, success=success))
        for duel_id, env_id, solver_id, condition, seed, status, success in Episode.objects.filter(
            Q(duel__status=Status.FINISHED) | outside_duels
        ).exclude(gone.episodes).values_list(
            "duel_id", "environment_id", "solver_id", "condition", "seed", "status", "success"
        ).iterator(chunk_size=CHUNK)
        if (duel_id is None or duel_id in duel_keys) and env_id not in voided_ids
    )
    transfers = tuple(
        TransferRecord(player_names[learner_id], environment_uuid.get(env_id),
                       player_names.get(author_id), benchmark, before, after)
        for learner_id, env_id, author_id, benchmark, before, after in
        TransferResult.objects.exclude(gone.environments).values_list(
            "learner_id", "environment_id", "author_id", "benchmark", "before", "after")
    )
    sizes = tuple(
        (name, size) for name, size in Player.objects.filter(parameters_b__isnull=False)
        .order_by("name").values_list("name", "parameters_b")
    )
    # Compliance over the replies of the same episodes the figures count.
    compliance = format_error_counts(steps=Step.objects.filter(episode__in=counted))
    return AnalyticsInput(
        compliance=compliance,
        sizes=sizes,
        players=tuple(sorted(player_names.values())),
        duels=duel_records,
        episodes=episodes,
        environments=tuple(environments),
        transfers=transfers,
    )


class _Excluded(NamedTuple):
    """Filters that leave out excluded designs (each matches nothing when none are)."""

    designs: Q
    environments: Q
    duels: Q
    episodes: Q
    step_episodes: Q


def _excluded(content_hashes: Collection[str]) -> _Excluded:
    nothing = Q(pk__in=[])
    if not content_hashes:
        return _Excluded(nothing, nothing, nothing, nothing, nothing)
    environments = Environment.objects.filter(content_hash__in=list(content_hashes)).values("pk")
    duels = Duel.objects.filter(Q(env_a__in=environments) | Q(env_b__in=environments))
    episodes = Episode.objects.filter(Q(environment__in=environments) | Q(duel__in=duels))
    return _Excluded(
        designs=Q(content_hash__in=list(content_hashes)),
        environments=Q(environment__in=environments), duels=Q(pk__in=duels.values("pk")),
        episodes=Q(pk__in=episodes.values("pk")),
        step_episodes=Q(episode__in=episodes.values("pk")))


def week_period(moment: datetime) -> str:
    """The ISO week of `moment`, the flywheel's period for work outside tournaments."""
    year, week, _ = moment.isocalendar()
    return f"week {year}-W{week:02d}"


def duel_period(*, tournament: str | None, round_index: int, created: datetime) -> str:
    """A duel's flywheel period: its tournament's round, or the ISO week of an ad-hoc duel."""
    return (f"{tournament} · round {round_index + 1}" if tournament is not None
            else week_period(created))


def analytics_fingerprint() -> dict[str, list]:
    """What the figures would be computed from now: [count, highest id] of finished duels,
    transfer results, environments and players (players also by how many have a known size,
    and those sizes' sum), and the highest episode id.

    A snapshot whose fingerprint differs describes older data; writes the counts cannot see
    mark the snapshot stale instead. One query of cheap aggregates, on every analytics read.
    """
    parts = {
        "duels": (Duel, "count(*), max(id)", "status = %s", [Status.FINISHED]),
        # Episodes by highest id only: counting them grows with the table, and an episode
        # that ends inside a duel changes that duel's count when it finishes.
        "episodes": (Episode, "max(id)", "", []),
        "transfers": (TransferResult, "count(*), max(id)", "", []),
        "environments": (Environment, "count(*), max(id)", "", []),
        "players": (Player, "count(*), max(id), count(parameters_b), sum(parameters_b)", "", []),
    }
    selects, params = [], []
    for model, columns, where, values in parts.values():
        for column in columns.split(", "):
            condition = f" WHERE {where}" if where else ""
            table = connection.ops.quote_name(model._meta.db_table)
            selects.append(f"(SELECT {column} FROM {table}{condition})")
            params.extend(values)
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(selects), params)
        row = list(cursor.fetchone())
    fingerprint = {}
    for name, (_, columns, _, _) in parts.items():
        width = len(columns.split(", "))
        fingerprint[name] = [float(v) if isinstance(v, Decimal) else v for v in row[:width]]
        row = row[width:]
    return fingerprint
