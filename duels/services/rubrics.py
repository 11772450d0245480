"""Writes for rubrics: check a list of questions, create a rubric, revise it into a new version.

A saved version never changes: answers point at the version they answered, so an edit writes
the next version of the same lineage instead.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from duels.annotation_defaults import (
    DEFAULT_QUESTIONS,
    DEFAULT_RUBRIC_LINEAGE,
    DEFAULT_RUBRIC_NAME,
    DEFAULT_RUBRIC_UUID,
)
from duels.models import QuestionKind, Rubric
from duels.services.annotation_access import rubric_can_edit

MAX_QUESTIONS = 30
MAX_LABELS = 30
MAX_SCALE = 10
MAX_PROMPT = 300
MAX_DESCRIPTION = 2000
_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_LABEL = re.compile(r"^[a-z0-9][a-z0-9_.:+-]{0,39}$")
LEVELS = ("nominal", "ordinal", "interval")


class RubricError(Exception):
    """A rubric could not be saved; `messages` says each thing to change (all of them)."""

    def __init__(self, message: str | list[str]) -> None:
        self.messages = [message] if isinstance(message, str) else list(message)
        super().__init__(" ".join(self.messages))


def _question(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise RubricError(f"{where}: give key, kind and prompt.")
    key = str(raw.get("key", "")).strip()
    if not _KEY.match(key):
        raise RubricError(f"{where}: the key {key[:40]!r} must start with a letter and use a–z, "
                          "0–9 and _ (at most 40 characters).")
    kind = str(raw.get("kind", ""))
    if kind not in QuestionKind.values:
        raise RubricError(f"{where} ({key}): the kind must be one of "
                          f"{', '.join(QuestionKind.values)}.")
    prompt = " ".join(str(raw.get("prompt", "")).split())
    if not prompt or len(prompt) > MAX_PROMPT:
        raise RubricError(f"{where} ({key}): write a prompt of 1–{MAX_PROMPT} characters.")
    description = str(raw.get("description", "")).strip()
    if len(description) > MAX_DESCRIPTION:
        raise RubricError(f"{where} ({key}): the description is limited to "
                          f"{MAX_DESCRIPTION} characters.")
    question: dict[str, Any] = {"key": key, "kind": kind, "prompt": prompt,
                                "description": description}
    if kind == QuestionKind.SCALE:
        try:
            scale_max = int(raw.get("scale_max") or 5)
        except (TypeError, ValueError):
            raise RubricError(f"{where} ({key}): the scale's top is a whole number.") from None
        if not 2 <= scale_max <= MAX_SCALE:
            raise RubricError(f"{where} ({key}): a scale runs from 1 to 2–{MAX_SCALE}.")
        question["scale_max"] = scale_max
        level = raw.get("level") or "ordinal"
        if level not in ("ordinal", "interval"):
            raise RubricError(f"{where} ({key}): a scale is ordinal or interval.")
        question["level"] = level
    if kind in (QuestionKind.SINGLE, QuestionKind.MULTI):
        labels = raw.get("labels") or []
        if isinstance(labels, str):
            labels = labels.split(",")
        cleaned = []
        for label in labels:
            label = re.sub(r"\s+", "-", str(label).strip().lower())
            if label and label not in cleaned:
                if not _LABEL.match(label):
                    raise RubricError(f"{where} ({key}): the label {label[:40]!r} may use a–z, "
                                      "0–9 and - _ . : + (at most 40 characters).")
                cleaned.append(label)
        if not 2 <= len(cleaned) <= MAX_LABELS:
            raise RubricError(f"{where} ({key}): give 2–{MAX_LABELS} labels.")
        question["labels"] = cleaned
    return question


def rubric_clean_questions(raw: Any, *,
                           places: list[str] | None = None) -> list[dict[str, Any]]:
    """The questions normalised and checked; RubricError lists every question at fault, each
    named by its place (`places`, e.g. the form's "Line 3"; "Question N" by default)."""
    if not isinstance(raw, list) or not raw:
        raise RubricError("A rubric needs at least one question.")
    if len(raw) > MAX_QUESTIONS:
        raise RubricError(f"A rubric holds at most {MAX_QUESTIONS} questions.")
    places = places or [f"Question {number}" for number in range(1, len(raw) + 1)]
    questions, problems = [], []
    for item, where in zip(raw, places, strict=True):
        try:
            questions.append(_question(item, where))
        except RubricError as exc:
            problems += exc.messages
    keys = [q["key"] for q in questions]
    duplicate = next((key for key in keys if keys.count(key) > 1), None)
    if duplicate:
        problems.append(f"Two questions share the key {duplicate!r}; keys must differ.")
    if problems:
        raise RubricError(problems)
    return questions


def _clean_name(name: str) -> str:
    name = " ".join(name.split())
    if not 1 <= len(name) <= 120:
        raise RubricError("Name the rubric (1–120 characters).")
    return name


def rubric_create(*, user: AbstractBaseUser, name: str, questions: Any,
                  description: str = "") -> Rubric:
    """A new rubric (version 1); staff only."""
    if not rubric_can_edit(user=user):
        raise RubricError("Only staff define rubrics.")
    return Rubric.objects.create(name=_clean_name(name), description=description.strip()[:2000],
                                 questions=rubric_clean_questions(questions), created_by=user)


def rubric_revise(*, user: AbstractBaseUser, rubric: Rubric, name: str, questions: Any,
                  description: str = "") -> Rubric:
    """The next version of `rubric`'s lineage with these questions; the old version stays."""
    if not rubric_can_edit(user=user):
        raise RubricError("Only staff edit rubrics.")
    clean = rubric_clean_questions(questions)
    with transaction.atomic():
        latest = (Rubric.objects.select_for_update().filter(lineage=rubric.lineage)
                  .aggregate(top=Max("version"))["top"] or 0)
        return Rubric.objects.create(
            lineage=rubric.lineage, version=latest + 1, name=_clean_name(name),
            description=description.strip()[:2000], questions=clean, created_by=user)


def rubric_default() -> Rubric:
    """The newest version of the default rubric (made from the starter tags; made again here
    when its first version was deleted, so the review pages never lack a rubric)."""
    first, _ = Rubric.objects.get_or_create(
        uuid=DEFAULT_RUBRIC_UUID,
        defaults={"lineage": DEFAULT_RUBRIC_LINEAGE, "version": 1, "name": DEFAULT_RUBRIC_NAME,
                  "questions": DEFAULT_QUESTIONS,
                  "description": "The starter tags, a 1–5 rating and a note."})
    return Rubric.objects.filter(lineage=first.lineage).order_by("-version").first()
