"""Writes for annotations: create, edit and delete notes, with the access rules in one place.

Anyone signed in may write a note; only its author may edit it; its author or staff may delete it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from duels.models import Annotation, Environment, Episode, TargetKind

MAX_TAGS = 12
MAX_TAG_LENGTH = 40
MAX_TEXT_LENGTH = 10_000
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.:+-]*$")


class AnnotationError(Exception):
    """A note could not be written; the message says what to change."""


@dataclass(frozen=True)
class AnnotationInput:
    """What a person typed: tags, rating 1–5, plain text and an optional source line range."""

    tags: tuple[str, ...] = ()
    rating: int | None = None
    text: str = ""
    line_start: int | None = None
    line_end: int | None = None


def annotation_clean_tags(raw: list[str] | tuple[str, ...] | str) -> tuple[str, ...]:
    """Normalise tags (lower case, spaces to dashes, deduplicated, order kept)."""
    items = raw.split(",") if isinstance(raw, str) else raw
    tags: list[str] = []
    for item in items:
        tag = re.sub(r"\s+", "-", str(item).strip().lower())
        if not tag:
            continue
        if len(tag) > MAX_TAG_LENGTH or not _TAG.match(tag):
            raise AnnotationError(
                f"Tag {tag[:MAX_TAG_LENGTH]!r} is not allowed: use letters, digits and - _ . : + "
                f"(at most {MAX_TAG_LENGTH} characters)."
            )
        if tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise AnnotationError(f"A note carries at most {MAX_TAGS} tags.")
    return tuple(tags)


def _checked(
    data: AnnotationInput, *, environment: Environment | None
) -> AnnotationInput:
    tags = annotation_clean_tags(data.tags)
    # A browser sends each line break as CRLF: it counts once, as the person sees it.
    text = data.text.replace("\r\n", "\n").strip()
    if len(text) > MAX_TEXT_LENGTH:
        raise AnnotationError(f"Notes are limited to {MAX_TEXT_LENGTH:,} characters.")
    if data.rating is not None and not 1 <= data.rating <= 5:
        raise AnnotationError("The rating is from 1 to 5.")
    line_start, line_end = data.line_start, data.line_end
    if line_start is None and line_end is not None:
        raise AnnotationError("Give the first line of the range as well.")
    if line_start is not None:
        if environment is None:
            raise AnnotationError("Line ranges belong on environment notes only.")
        line_end = line_start if line_end is None else line_end
        line_count = len(environment.source.splitlines())
        if line_start < 1 or line_end < line_start:
            raise AnnotationError("The range runs from a first line to a later (or the same) line.")
        if line_end > line_count:
            raise AnnotationError(
                f"The source has {line_count} lines; the range ends at {line_end}."
            )
    if not (tags or text or data.rating is not None or line_start is not None):
        raise AnnotationError("An empty note: add a tag, a rating, a line range or some text.")
    return AnnotationInput(
        tags=tags, rating=data.rating, text=text, line_start=line_start, line_end=line_end
    )


def annotation_create(
    *,
    author: AbstractBaseUser,
    data: AnnotationInput,
    environment: Environment | None = None,
    episode: Episode | None = None,
    step_index: int | None = None,
) -> Annotation:
    """Write a note on an environment, an episode, or one step (episode + step_index)."""
    if not author.is_authenticated:
        raise AnnotationError("Sign in to write notes.")
    if (environment is None) == (episode is None):
        raise AnnotationError("A note is about an environment or an episode (or one of its steps).")
    if step_index is not None and (episode is None or step_index < 0):
        raise AnnotationError("A step note needs an episode and a step number of 0 or more.")
    if environment is not None:
        kind = TargetKind.ENVIRONMENT
    else:
        kind = TargetKind.EPISODE if step_index is None else TargetKind.STEP
    clean = _checked(data, environment=environment)
    return Annotation.objects.create(
        target_kind=kind,
        environment=environment,
        episode=episode,
        step_index=step_index,
        author=author,
        tags=list(clean.tags),
        rating=clean.rating,
        text=clean.text,
        line_start=clean.line_start,
        line_end=clean.line_end,
    )


def annotation_can_edit(*, annotation: Annotation, user: AbstractBaseUser) -> bool:
    return bool(user.is_authenticated and annotation.author_id == user.pk)


def annotation_can_delete(*, annotation: Annotation, user: AbstractBaseUser) -> bool:
    return annotation_can_edit(annotation=annotation, user=user) or bool(
        user.is_authenticated and user.is_staff
    )


def annotation_update(
    *, annotation: Annotation, user: AbstractBaseUser, data: AnnotationInput
) -> Annotation:
    """Replace the note's content; only its author may."""
    if not annotation_can_edit(annotation=annotation, user=user):
        raise AnnotationError("Only the author of a note can edit it.")
    clean = _checked(data, environment=annotation.environment)
    annotation.tags = list(clean.tags)
    annotation.rating = clean.rating
    annotation.text = clean.text
    annotation.line_start = clean.line_start
    annotation.line_end = clean.line_end
    annotation.save()
    return annotation


def annotation_delete(*, annotation: Annotation, user: AbstractBaseUser) -> None:
    """Remove a note; its author or a staff member may."""
    if not annotation_can_delete(annotation=annotation, user=user):
        raise AnnotationError("Only the author of a note or a staff member can remove it.")
    annotation.delete()
