"""What an export holds: the querysets per record kind for everything, or for a filtered list.

A filtered export is closed under references: a duel brings its players, environments, hints,
tournament and episodes (with steps); notes and transfer results on the chosen objects come along.
Everything stays a lazy queryset (sub-queries, no id lists in memory), so exports stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Q, QuerySet

from duels.models import (
    Adjudication,
    Annotation,
    AnnotationQueue,
    Answer,
    Duel,
    Environment,
    Episode,
    Hint,
    OutsideOutcome,
    Panel,
    PanelEntry,
    Player,
    Rubric,
    Step,
    Study,
    TargetKind,
    Tournament,
    TransferResult,
)
from duels.selectors.annotations import duel_filter_by_annotation, environment_filter_by_annotation


@dataclass(frozen=True)
class DuelExportFilters:
    """The duel list's filters: player (name or uuid), tournament uuid, status, outcome, tag."""

    player: str = ""
    tournament: str = ""
    status: str = ""
    outcome: str = ""
    tag: str = ""
    annotated_by: AbstractBaseUser | None = None


@dataclass(frozen=True)
class EnvironmentExportFilters:
    """The environment list's filters: author (player name or uuid), status, family, tag."""

    author: str = ""
    status: str = ""
    family: str = ""
    tag: str = ""
    annotated_by: AbstractBaseUser | None = None


def _player_q(value: str, *prefixes: str) -> Q:
    condition = Q()
    for prefix in prefixes:
        try:
            condition |= Q(**{f"{prefix}__uuid": UUID(value)})
        except ValueError:
            condition |= Q(**{f"{prefix}__name": value})
    return condition


def _uuid_or_none(value: str) -> UUID | None:
    try:
        return UUID(value)
    except ValueError:
        return None


def exchange_everything() -> dict[str, QuerySet]:
    """Every record of the installation."""
    return {
        "player": Player.objects.all(),
        "study": Study.objects.all(),
        "environment": Environment.objects.all(),
        "hint": Hint.objects.all(),
        "tournament": Tournament.objects.all(),
        "duel": Duel.objects.all(),
        "episode": Episode.objects.all(),
        "step": Step.objects.all(),
        "annotation": Annotation.objects.all(),
        "transfer": TransferResult.objects.all(),
        "rubric": Rubric.objects.all(),
        "queue": AnnotationQueue.objects.all(),
        "answer": Answer.objects.all(),
        "adjudication": Adjudication.objects.all(),
        "panel": Panel.objects.all(),
        "panel_entry": PanelEntry.objects.all(),
        "outside_outcome": OutsideOutcome.objects.all(),
    }


def exchange_duels_filtered(*, filters: DuelExportFilters) -> QuerySet[Duel]:
    duels = Duel.objects.all()
    if filters.player:
        duels = duels.filter(_player_q(filters.player, "a", "b"))
    if filters.tournament:
        tournament_uuid = _uuid_or_none(filters.tournament)
        duels = duels.filter(tournament__uuid=tournament_uuid) if tournament_uuid else duels.none()
    if filters.status:
        duels = duels.filter(status=filters.status)
    if filters.outcome:
        duels = duels.filter(outcome=filters.outcome)
    return duel_filter_by_annotation(
        duels, tag=filters.tag or None, annotated_by=filters.annotated_by
    )


def exchange_environments_filtered(*, filters: EnvironmentExportFilters) -> QuerySet[Environment]:
    environments = Environment.objects.all()
    if filters.author:
        environments = environments.filter(_player_q(filters.author, "author"))
    if filters.status:
        environments = environments.filter(status=filters.status)
    if filters.family:
        environments = environments.filter(family__iexact=filters.family)
    return environment_filter_by_annotation(
        environments, tag=filters.tag or None, annotated_by=filters.annotated_by
    )


def with_lineage(environments: QuerySet[Environment]) -> QuerySet[Environment]:
    """The environments and, for a study's version, every version of its slot: a version's
    record names its parent and its study, so the file holds them all."""
    same_slot = environments.filter(study__isnull=False, study=OuterRef("study"),
                                    author=OuterRef("author"), slot=OuterRef("slot"))
    return Environment.objects.filter(Q(pk__in=environments.values("pk"))
                                      | Q(study__isnull=False) & Exists(same_slot))


def _studies_of(environments: QuerySet[Environment]) -> QuerySet[Study]:
    return Study.objects.filter(pk__in=environments.values("study"))


def _players_of(*conditions: Q) -> QuerySet[Player]:
    combined = Q(pk__in=[])
    for condition in conditions:
        combined |= condition
    return Player.objects.filter(combined)


def exchange_for_duels(*, duels: QuerySet[Duel]) -> dict[str, QuerySet]:
    """The duels with everything they refer to and every note and transfer result on them."""
    duel_ids = duels.values("pk")
    episodes = Episode.objects.filter(duel__in=duel_ids)
    environments = with_lineage(Environment.objects.filter(
        Q(pk__in=duels.values("env_a")) | Q(pk__in=duels.values("env_b"))
    ))
    studies = _studies_of(environments)
    tournaments = Tournament.objects.filter(pk__in=duels.values("tournament"))
    hints = Hint.objects.filter(environment__in=environments.values("pk"))
    transfers = TransferResult.objects.filter(environment__in=environments.values("pk"))
    players = _players_of(
        Q(pk__in=duels.values("a")),
        Q(pk__in=duels.values("b")),
        Q(pk__in=environments.values("author")),
        Q(pk__in=hints.values("author")),
        Q(pk__in=tournaments.values("players")),
        Q(pk__in=studies.values("players")),
        Q(pk__in=transfers.values("learner")),
        Q(pk__in=transfers.values("author")),
    )
    annotations = Annotation.objects.filter(
        Q(target_kind=TargetKind.ENVIRONMENT, environment__in=environments.values("pk"))
        | Q(episode__in=episodes.values("pk"))
    )
    return {
        "player": players,
        "study": studies,
        "environment": environments,
        "hint": hints,
        "tournament": tournaments,
        "duel": Duel.objects.filter(pk__in=duel_ids),
        "episode": episodes,
        "step": Step.objects.filter(episode__in=episodes.values("pk")),
        "annotation": annotations,
        "transfer": transfers,
    }


def exchange_for_environments(*, environments: QuerySet[Environment]) -> dict[str, QuerySet]:
    """Environment designs, every copy of each: their authors, hints, notes and transfer
    results (no episodes)."""
    environments = with_lineage(Environment.objects.filter(
        content_hash__in=environments.order_by().values("content_hash")))
    environment_ids = environments.values("pk")
    studies = _studies_of(environments)
    hints = Hint.objects.filter(environment__in=environment_ids)
    transfers = TransferResult.objects.filter(environment__in=environment_ids)
    players = _players_of(
        Q(pk__in=studies.values("players")),
        Q(pk__in=environments.values("author")),
        Q(pk__in=hints.values("author")),
        Q(pk__in=transfers.values("learner")),
        Q(pk__in=transfers.values("author")),
    )
    return {
        "player": players,
        "study": studies,
        "environment": Environment.objects.filter(pk__in=environment_ids),
        "hint": hints,
        "annotation": Annotation.objects.filter(
            target_kind=TargetKind.ENVIRONMENT, environment__in=environment_ids
        ),
        "transfer": transfers,
    }
