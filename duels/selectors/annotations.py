"""Reads about annotations: notes on an environment, episode or step; tags; the review queue."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from duels.models import STARTER_TAGS, Annotation, Duel, Environment, Episode, TargetKind
from duels.selectors.designs import design_list


def _tag_lookup(tag: str) -> Q:
    # Tags are stored as a JSON list of normalised strings; the quoted tag matches one item
    # exactly on SQLite and PostgreSQL alike (JSON `contains` is not available on SQLite).
    return Q(tags__icontains=f'"{tag.strip().lower()}"')


def _design_notes(environment: Environment) -> QuerySet[Annotation]:
    # A note belongs to the design: it shows on every copy of the same source.
    return Annotation.objects.filter(
        target_kind=TargetKind.ENVIRONMENT,
        environment__content_hash=environment.content_hash,
    )


def annotations_for_environment(*, environment: Environment) -> QuerySet[Annotation]:
    """Notes on the environment's design (made on any copy), newest first, with their authors."""
    return (
        _design_notes(environment)
        .select_related("author", "environment")
        .order_by("-created_at", "-pk")
    )


def annotations_for_episode(
    *, episode: Episode, step_index: int | None = None
) -> QuerySet[Annotation]:
    """Notes on the episode itself (step_index None) or on one of its steps."""
    notes = Annotation.objects.filter(episode=episode).select_related("author")
    if step_index is None:
        notes = notes.filter(target_kind=TargetKind.EPISODE)
    else:
        notes = notes.filter(target_kind=TargetKind.STEP, step_index=step_index)
    return notes.order_by("-created_at", "-pk")


def annotations_for_steps(*, episode: Episode) -> QuerySet[Annotation]:
    """Every step note on the episode, by step then newest first (for the replay viewer)."""
    return (
        Annotation.objects.filter(episode=episode, target_kind=TargetKind.STEP)
        .select_related("author")
        .order_by("step_index", "-created_at", "-pk")
    )


def annotated_line_ranges(*, environment: Environment) -> list[tuple[int, int]]:
    """Source line ranges (1-based, inclusive) that notes point at, merged and sorted."""
    rows = (
        _design_notes(environment).filter(line_start__isnull=False)
        .order_by("line_start")
        .values_list("line_start", "line_end")
    )
    merged: list[tuple[int, int]] = []
    for start, end in rows:
        end = end or start
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def annotation_get(*, annotation_uuid: UUID) -> Annotation:
    """One annotation with what it points at (raises Annotation.DoesNotExist)."""
    return Annotation.objects.select_related("author", "environment", "episode").get(
        uuid=annotation_uuid
    )


def annotation_tags_in_use(*, limit: int = 200) -> list[str]:
    """Every tag used on any note plus the starter set, sorted, for autocomplete."""
    tags = set(STARTER_TAGS)
    for tag_list in Annotation.objects.exclude(tags=[]).values_list("tags", flat=True).iterator(
        chunk_size=2000
    ):
        tags.update(tag for tag in tag_list or [] if isinstance(tag, str))
        if len(tags) >= limit:
            break
    return sorted(tags)


def environment_filter_by_annotation(
    queryset: QuerySet[Environment],
    *,
    tag: str | None = None,
    annotated_by: AbstractBaseUser | None = None,
) -> QuerySet[Environment]:
    """Narrow environments to those whose design has a note carrying `tag` and/or written by a
    user (on any copy)."""
    notes = Annotation.objects.filter(target_kind=TargetKind.ENVIRONMENT)
    if not tag and annotated_by is None:
        return queryset
    if tag:
        notes = notes.filter(_tag_lookup(tag))
    if annotated_by is not None:
        notes = notes.filter(author=annotated_by)
    return queryset.filter(content_hash__in=notes.values("environment__content_hash"))


def duel_filter_by_annotation(
    queryset: QuerySet[Duel],
    *,
    tag: str | None = None,
    annotated_by: AbstractBaseUser | None = None,
) -> QuerySet[Duel]:
    """Narrow duels to those where either environment's design, or any episode or step, has a
    match."""
    if not tag and annotated_by is None:
        return queryset
    notes = Annotation.objects.all()
    if tag:
        notes = notes.filter(_tag_lookup(tag))
    if annotated_by is not None:
        notes = notes.filter(author=annotated_by)
    designs = notes.filter(target_kind=TargetKind.ENVIRONMENT).values(
        "environment__content_hash")
    episode_duel_ids = Episode.objects.filter(
        pk__in=notes.exclude(target_kind=TargetKind.ENVIRONMENT).values("episode_id"),
        duel__isnull=False,
    ).values("duel_id")
    return queryset.filter(
        Q(env_a__content_hash__in=designs) | Q(env_b__content_hash__in=designs)
        | Q(pk__in=episode_duel_ids)
    )


def review_queue(
    *, family: str = "", author: str = "", tag: str = ""
) -> QuerySet[Environment]:
    """Designs to review (each by its first copy), oldest first: nobody's notes on any copy yet,
    or those matching `tag`.

    `author` is a player's name or uuid (any copy's author); `family` matches case-insensitively.
    """
    environments = design_list().prefetch_related("hints")
    if tag:
        environments = environment_filter_by_annotation(environments, tag=tag)
    else:
        environments = environments.exclude(
            content_hash__in=Annotation.objects.filter(target_kind=TargetKind.ENVIRONMENT).values(
                "environment__content_hash"
            )
        )
    if family:
        environments = environments.filter(family__iexact=family)
    if author:
        try:
            by_author = Environment.objects.filter(author__uuid=UUID(author))
        except ValueError:
            by_author = Environment.objects.filter(author__name=author)
        environments = environments.filter(content_hash__in=by_author.values("content_hash"))
    return environments.order_by("created_at", "pk")


def review_queue_next(
    *, queue: QuerySet[Environment], after: Environment | None = None
) -> Environment | None:
    """The first environment of the queue after `after` (the one just saved or skipped)."""
    if after is not None:
        queue = queue.filter(
            Q(created_at__gt=after.created_at) | Q(created_at=after.created_at, pk__gt=after.pk)
        )
    return queue.first()
