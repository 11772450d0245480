"""Writes for answers and adjudications: check values against the rubric version, save them.

An answer is one annotator's response to one queue item: a design (single queue) or a pair of
designs (pairwise queue, `choice` a, b or tie). Saving again replaces the annotator's own answer
to that item; nobody else's answer can be touched.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from duels.annotation_defaults import EXCLUDING_LABELS
from duels.models import Adjudication, AnnotationQueue, Answer, QuestionKind, Rubric
from duels.services.annotation_access import (
    QUEUE_DENIED,
    STAFF_ONLY,
    queue_can_annotate,
    queue_can_manage,
)
from duels.signals import data_changed

MAX_ANSWER_TEXT = 10_000
CHOICES = ("a", "b", "tie")


class AnswerError(Exception):
    """An answer could not be saved; the message says what to change."""


def queue_item(*, queue: AnnotationQueue, index: int) -> tuple[str, str]:
    """The item at `index`: (design, "") or, pairwise, (left design, right design)."""
    items = queue.pairs if queue.is_pairwise else queue.designs
    if not 0 <= index < len(items):
        raise AnswerError(f"The queue has items 1–{len(items)}.")
    return (items[index][0], items[index][1]) if queue.is_pairwise else (items[index], "")


def question_clean_value(*, question: dict[str, Any], value: Any) -> Any:
    """One answer value in its stored form (None when unanswered); raises AnswerError."""
    kind, prompt = question["kind"], question["prompt"]
    if value in (None, "", []):
        return None
    if kind == QuestionKind.SCALE:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise AnswerError(f"{prompt}: choose a number from 1 to "
                              f"{question['scale_max']}.") from None
        if not 1 <= number <= question["scale_max"]:
            raise AnswerError(f"{prompt}: choose a number from 1 to {question['scale_max']}.")
        return number
    if kind == QuestionKind.SINGLE:
        if value not in question["labels"]:
            raise AnswerError(f"{prompt}: choose one of {', '.join(question['labels'])}.")
        return value
    if kind == QuestionKind.MULTI:
        values = [value] if isinstance(value, str) else list(value)
        unknown = [item for item in values if item not in question["labels"]]
        if unknown:
            raise AnswerError(f"{prompt}: {str(unknown[0])[:40]!r} is not one of its labels.")
        return [label for label in question["labels"] if label in values]
    if kind == QuestionKind.YESNO:
        if value in (True, "yes", "true", "1"):
            return True
        if value in (False, "no", "false", "0"):
            return False
        raise AnswerError(f"{prompt}: answer yes or no.")
    text = str(value).strip()
    if len(text) > MAX_ANSWER_TEXT:
        raise AnswerError(f"{prompt}: at most {MAX_ANSWER_TEXT:,} characters.")
    return text or None


def _labels_count(rubric: Rubric) -> bool:
    """True when answers to this rubric can change which designs the figures leave out."""
    return any(set(q.get("labels") or ()) & set(EXCLUDING_LABELS) for q in rubric.questions)


REQUIRED_KINDS = (QuestionKind.SCALE, QuestionKind.SINGLE, QuestionKind.YESNO)


def answer_clean_values(*, rubric: Rubric, values: dict[str, Any]) -> dict[str, Any]:
    """Every question's value checked; scales, single choices and yes/no must be answered."""
    clean: dict[str, Any] = {}
    for question in rubric.questions:
        value = question_clean_value(question=question, value=values.get(question["key"]))
        if value is None and question["kind"] in REQUIRED_KINDS:
            raise AnswerError(f"{question['prompt']}: this question needs an answer.")
        if value is not None:
            clean[question["key"]] = value
    return clean


def answer_save(
    *, user: AbstractBaseUser, queue: AnnotationQueue, index: int,
    values: dict[str, Any] | None = None, choice: str = "",
) -> Answer:
    """Save (or replace) `user`'s answer to item `index` of `queue`."""
    if not queue_can_annotate(queue=queue, user=user):
        raise AnswerError(QUEUE_DENIED)
    design, design_b = queue_item(queue=queue, index=index)
    if queue.is_pairwise:
        if choice not in CHOICES:
            raise AnswerError("Choose the left design (a), the right one (b) or a tie (t).")
        note = question_clean_value(question={"kind": QuestionKind.TEXT, "prompt": "Note"},
                                    value=(values or {}).get("note"))
        clean = {"note": note} if note else {}
    else:
        clean = answer_clean_values(rubric=queue.rubric, values=values or {})
        choice = ""
    with transaction.atomic():
        answer, _ = Answer.objects.update_or_create(
            queue=queue, annotator=user, design=design, design_b=design_b,
            defaults={"rubric": queue.rubric, "values": clean, "choice": choice})
    if not queue.is_pairwise and _labels_count(queue.rubric):
        # Labels may now leave a design out of the figures.
        data_changed.send(sender=Answer)
    return answer


def adjudication_save(
    *, user: AbstractBaseUser, queue: AnnotationQueue, design: str, question_key: str,
    value: Any, note: str = "",
) -> Adjudication:
    """Settle one question of one design of the queue (staff only); replaces an earlier one."""
    if not queue_can_manage(user=user):
        raise AnswerError(STAFF_ONLY)
    if design not in queue.designs:
        raise AnswerError("That design is not in this queue.")
    question = queue.rubric.question(question_key)
    if question is None or question["kind"] == QuestionKind.TEXT:
        raise AnswerError("Adjudicate one of the rubric's questions with set answers.")
    clean = question_clean_value(question=question, value=value)
    if clean is None and question["kind"] != QuestionKind.MULTI:
        raise AnswerError(f"{question['prompt']}: give the settled answer.")
    adjudication, _ = Adjudication.objects.update_or_create(
        queue=queue, design=design, question=question_key,
        defaults={"value": clean if clean is not None else [], "note": note.strip()[:2000],
                  "decided_by": user})
    if _labels_count(queue.rubric):
        data_changed.send(sender=Adjudication)
    return adjudication
