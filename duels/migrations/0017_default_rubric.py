"""The starter tags become the default rubric (version 1)."""

from __future__ import annotations

import uuid

from django.db import migrations

from duels.annotation_defaults import (
    DEFAULT_QUESTIONS,
    DEFAULT_RUBRIC_LINEAGE,
    DEFAULT_RUBRIC_NAME,
    DEFAULT_RUBRIC_UUID,
)


def create_default_rubric(apps, schema_editor):
    rubric_model = apps.get_model("duels", "Rubric")
    rubric_model.objects.get_or_create(
        uuid=uuid.UUID(DEFAULT_RUBRIC_UUID),
        defaults={"lineage": uuid.UUID(DEFAULT_RUBRIC_LINEAGE), "version": 1,
                  "name": DEFAULT_RUBRIC_NAME, "questions": DEFAULT_QUESTIONS,
                  "description": "The starter tags, a 1–5 rating and a note."},
    )


def remove_default_rubric(apps, schema_editor):
    apps.get_model("duels", "Rubric").objects.filter(uuid=uuid.UUID(DEFAULT_RUBRIC_UUID)).delete()


class Migration(migrations.Migration):
    dependencies = [("duels", "0016_annotation_rubrics_queues")]
    operations = [migrations.RunPython(create_default_rubric, remove_default_rubric)]
