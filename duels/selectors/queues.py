"""Reads for annotation queues: the next item for an annotator, progress, and the answers."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from duels.models import Adjudication, AnnotationQueue, Answer, Environment, Rubric


def queue_list(*, user: AbstractBaseUser) -> QuerySet[AnnotationQueue]:
    """Queues the user may see: every queue for staff, the ones they annotate otherwise."""
    queues = AnnotationQueue.objects.select_related("rubric").prefetch_related("annotators")
    if not user.is_staff:
        queues = queues.filter(annotators=user)
    return queues.order_by("-created_at", "-pk")


def rubric_versions() -> QuerySet[Rubric]:
    """Every rubric version, newest version of each lineage first within its name."""
    return Rubric.objects.order_by("name", "lineage", "-version")


def queue_items(queue: AnnotationQueue) -> list[tuple[str, str]]:
    """(design, design_b) for each item of the queue, in serving order."""
    if queue.is_pairwise:
        return [(pair[0], pair[1]) for pair in queue.pairs]
    return [(design, "") for design in queue.designs]


def _answered(queue: AnnotationQueue) -> dict[tuple[str, str], set[int]]:
    done: dict[tuple[str, str], set[int]] = defaultdict(set)
    for design, design_b, annotator_id in Answer.objects.filter(queue=queue).values_list(
            "design", "design_b", "annotator_id"):
        done[(design, design_b)].add(annotator_id)
    return done


def queue_next_index(*, queue: AnnotationQueue, user: AbstractBaseUser,
                     after: int | None = None) -> int | None:
    """The first item after `after` (wrapping round) that `user` has not answered and that
    still needs answers (fewer than the overlap); None when nothing is left for them."""
    items = queue_items(queue)
    done = _answered(queue)
    start = 0 if after is None else after + 1
    for offset in range(len(items)):
        index = (start + offset) % len(items)
        who = done.get(items[index], set())
        if user.pk not in who and len(who) < queue.overlap:
            return index
    return None


def queue_answer_of(*, queue: AnnotationQueue, user: AbstractBaseUser,
                    index: int) -> Answer | None:
    """The user's own answer to item `index`, if any."""
    design, design_b = queue_items(queue)[index]
    return Answer.objects.filter(queue=queue, annotator=user, design=design,
                                 design_b=design_b).first()


def queue_previous_index(*, queue: AnnotationQueue, user: AbstractBaseUser,
                         before: int | None) -> int | None:
    """The item the user answered most recently (other than `before`), to go back to."""
    position = {item: i for i, item in enumerate(queue_items(queue))}
    answers = (Answer.objects.filter(queue=queue, annotator=user)
               .order_by("-updated_at", "-pk").values_list("design", "design_b"))
    for item in answers[:50]:
        index = position.get(tuple(item))
        if index is not None and index != before:
            return index
    return None


@dataclass(frozen=True)
class QueueProgress:
    items: int
    complete: int  # items with `overlap` answers
    answers: int
    needed: int  # items × overlap
    per_annotator: list[tuple[str, int]]  # (username, answers), most first

    @property
    def percent(self) -> int:
        return round(100 * self.answers / self.needed) if self.needed else 100


def _progress(queue: AnnotationQueue, rows: list[tuple[str, str, str]]) -> QueueProgress:
    items = queue_items(queue)
    done: dict[tuple[str, str], set[str]] = defaultdict(set)
    for design, design_b, username in rows:
        done[(design, design_b)].add(username)
    counts = Counter(username for _, _, username in rows)
    for user in queue.annotators.all():
        counts.setdefault(user.get_username(), 0)
    return QueueProgress(
        items=len(items),
        complete=sum(1 for item in items if len(done.get(item, ())) >= queue.overlap),
        answers=sum(min(len(done.get(item, ())), queue.overlap) for item in items),
        needed=len(items) * queue.overlap,
        per_annotator=sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])),
    )


def queue_progress(*, queue: AnnotationQueue) -> QueueProgress:
    """How far the queue is: complete items, answers given and each annotator's count."""
    rows = list(Answer.objects.filter(queue=queue).values_list(
        "design", "design_b", "annotator__username"))
    return _progress(queue, rows)


def queue_progress_many(*, queues: list[AnnotationQueue]) -> dict[int, QueueProgress]:
    """Each queue's progress (queues with their annotators prefetched), in one query."""
    rows: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    for queue_id, design, design_b, username in Answer.objects.filter(
            queue__in=[queue.pk for queue in queues]).values_list(
            "queue_id", "design", "design_b", "annotator__username"):
        rows[queue_id].append((design, design_b, username))
    return {queue.pk: _progress(queue, rows[queue.pk]) for queue in queues}


def design_representatives(*, content_hashes: list[str]) -> dict[str, Environment]:
    """Each design's first copy (with author and hints), by content hash."""
    found: dict[str, Environment] = {}
    rows = (Environment.objects.filter(content_hash__in=content_hashes)
            .select_related("author").prefetch_related("hints").order_by("pk"))
    for environment in rows:
        found.setdefault(environment.content_hash, environment)
    return found


def queue_answers(*, queue: AnnotationQueue) -> QuerySet[Answer]:
    """Every answer in the queue with its annotator, oldest first."""
    return Answer.objects.filter(queue=queue).select_related("annotator").order_by(
        "created_at", "pk")


def queue_adjudications(*, queue: AnnotationQueue) -> dict[tuple[str, str], Adjudication]:
    """(design, question key) → the settled answer."""
    return {(row.design, row.question): row
            for row in Adjudication.objects.filter(queue=queue).select_related("decided_by")}
