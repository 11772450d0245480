"""Who may do what with rubrics, queues, answers and adjudications: one helper per action.

Staff define rubrics and queues and settle disagreements; a queue's annotators answer its items
and read its progress and agreement; an answer is changed only by the person who gave it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from duels.models import AnnotationQueue, Answer

User = AbstractBaseUser | AnonymousUser

QUEUE_DENIED = "You are not an annotator of this queue; staff add annotators on its page."
ANSWER_DENIED = "Only the annotator who gave this answer may change it."
STAFF_ONLY = "Only staff define rubrics and queues and adjudicate."


def _staff(user: User) -> bool:
    return bool(user.is_authenticated and user.is_staff)


def rubric_can_edit(*, user: User) -> bool:
    """Staff define and revise rubrics."""
    return _staff(user)


def queue_can_manage(*, user: User) -> bool:
    """Staff create queues, choose annotators and adjudicate."""
    return _staff(user)


def queue_can_annotate(*, queue: AnnotationQueue, user: User) -> bool:
    """The queue's annotators answer its items."""
    if not user.is_authenticated:
        return False
    return queue.annotators.filter(pk=user.pk).exists()


def queue_can_view(*, queue: AnnotationQueue, user: User) -> bool:
    """Staff and the queue's annotators read its progress, agreement and ranking."""
    return _staff(user) or queue_can_annotate(queue=queue, user=user)


def answer_can_edit(*, answer: Answer, user: User) -> bool:
    """Only the annotator who gave an answer changes it."""
    return bool(user.is_authenticated and answer.annotator_id == user.pk)
