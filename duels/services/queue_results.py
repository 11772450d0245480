"""A queue's agreement and ranking, computed once per revision of its answers and kept
(`QueueResults`), so its results page costs the same at any queue size: the page reads the
stored figures when they are current; a small queue's are computed within the request, a large
one's by a background task while the page shows the last ones (or says they are coming)."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError
from django.utils import timezone

from duels.engine.task_registry import task_named
from duels.models import AnnotationQueue, Answer, QueueResults
from duels.selectors.agreement import (
    measured_parts,
    queue_agreement_figures,
    queue_ranking_figures,
    queue_revision,
)

AGREEMENT, RANKING = "agreement", "ranking"
# Past these, the figures are computed in the background (answers × measured parts for the
# agreement; judgments for the ranking).
INLINE_AGREEMENT_WORK = 2_000_000
INLINE_RANKING_JUDGMENTS = 3_000


def _inline(queue: AnnotationQueue, kind: str) -> bool:
    answers = Answer.objects.filter(queue=queue).count()
    if kind == RANKING:
        return answers <= INLINE_RANKING_JUDGMENTS
    return answers * max(1, len(measured_parts(queue.rubric))) <= INLINE_AGREEMENT_WORK


def queue_results(*, queue: AnnotationQueue, kind: str) -> tuple[Any, bool]:
    """(figures, current): the figures of the queue's answers as they stand, or, while a large
    queue's are being recomputed, the last ones (None before the first) and False."""
    revision = queue_revision(queue=queue)
    row = QueueResults.objects.filter(queue=queue, kind=kind).first()
    if row is not None and row.revision == revision and row.computed_at is not None:
        return row.data, True
    if _inline(queue, kind):
        return queue_results_compute(queue=queue, kind=kind, revision=revision), True
    if row is None:
        try:
            row = QueueResults.objects.create(queue=queue, kind=kind)
        except IntegrityError:  # another request made it at the same moment
            row = QueueResults.objects.get(queue=queue, kind=kind)
    if row.pending != revision:
        QueueResults.objects.filter(pk=row.pk).update(pending=revision)
        task_named("queue_results").enqueue(str(queue.uuid), kind)
    return row.data, False


def queue_results_compute(*, queue: AnnotationQueue, kind: str,
                          revision: str | None = None) -> Any:
    """Compute and keep the queue's figures of `kind` (the background task's work)."""
    revision = revision or queue_revision(queue=queue)
    figures = (queue_agreement_figures(queue=queue) if kind == AGREEMENT
               else queue_ranking_figures(queue=queue))
    QueueResults.objects.update_or_create(
        queue=queue, kind=kind,
        defaults={"revision": revision, "data": figures, "computed_at": timezone.now(),
                  "pending": ""})
    return figures
