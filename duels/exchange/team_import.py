"""Building team-annotation rows from checked `envduels.v1` records (rubric, queue, answer,
adjudication). People named in a file become `imported:<name>` identities, never accounts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.db import models

from duels.models import Adjudication, AnnotationQueue, Answer, Rubric


class TeamImportError(Exception):
    """The record contradicts what it refers to; the importer names the line."""


def team_record_build(record: dict[str, Any], *, pk: Callable[[str, str | None], int | None],
                      user: Callable[[str], Any]) -> models.Model:
    """The unsaved row of a rubric, queue, answer or adjudication record."""
    kind, uuid = record["kind"], UUID(record["uuid"])
    if kind == "rubric":
        return Rubric(uuid=uuid, lineage=UUID(record["lineage"]), version=record["version"],
                      name=record["name"], description=record["description"],
                      questions=record["questions"])
    if kind == "queue":
        return AnnotationQueue(
            uuid=uuid, name=record["name"], rubric_id=pk("rubric", record["rubric"]),
            kind=record["queue_kind"], pair_question=record["pair_question"],
            overlap=record["overlap"], selection=record["selection"], designs=record["designs"],
            pairs=record["pairs"], item_kind=record["item_kind"],
            guidelines=record["guidelines"])
    if kind == "answer":
        rubric = Rubric.objects.get(pk=pk("rubric", record["rubric"]))
        if rubric.version != record["rubric_version"]:
            raise TeamImportError(
                f"field 'rubric_version' is {record['rubric_version']}, but rubric "
                f"{rubric.uuid} is version {rubric.version}")
        return Answer(uuid=uuid, queue_id=pk("queue", record["queue"]), rubric=rubric,
                      annotator=user(record["annotator"]), design=record["design"],
                      design_b=record["design_b"], values=record["values"],
                      choice=record["choice"])
    return Adjudication(
        uuid=uuid, queue_id=pk("queue", record["queue"]), design=record["design"],
        question=record["question"], value=record["value"], note=record["note"],
        decided_by=user(record["decided_by"]) if record["decided_by"] else None)


def team_record_after_save(obj: models.Model, record: dict[str, Any], *,
                           user: Callable[[str], Any]) -> None:
    """What needs the saved row: a queue's annotators."""
    if record["kind"] == "queue":
        obj.annotators.set([user(name) for name in record["annotators"]])
