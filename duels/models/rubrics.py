"""Team annotation: versioned rubrics, queues of designs, answers and adjudicated labels.

A rubric version is immutable once saved: an edit writes a new `Rubric` row with the same
`lineage` and the next `version`, so every answer keeps the questions it answered. Designs are
addressed by their content hash (copies of one source are one design).
"""

from __future__ import annotations

import uuid as uuid_lib

from django.conf import settings
from django.db import models
from django.db.models import Q


class QuestionKind(models.TextChoices):
    SCALE = "scale", "scale 1–N"
    SINGLE = "single", "one label"
    MULTI = "multi", "several labels"
    YESNO = "yesno", "yes / no"
    TEXT = "text", "free text"


class Rubric(models.Model):
    """One version of a rubric: a name and an ordered list of questions (JSON, checked by
    `duels.services.rubrics.rubric_clean_questions`)."""

    uuid = models.UUIDField(default=uuid_lib.uuid4, unique=True, editable=False)
    lineage = models.UUIDField(default=uuid_lib.uuid4, db_index=True)
    version = models.PositiveIntegerField(default=1)
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    questions = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["lineage", "version"], name="rubric_version_once"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    def question(self, key: str) -> dict | None:
        return next((q for q in self.questions if q.get("key") == key), None)


class QueueKind(models.TextChoices):
    SINGLE = "single", "one design at a time"
    PAIRWISE = "pairwise", "two designs side by side"


class ItemKind(models.TextChoices):
    DESIGN = "design", "designs"
    EPISODE = "episode", "episodes"
    STEP = "step", "steps"


class AnnotationQueue(models.Model):
    """A frozen selection of items (designs, episodes or steps), a rubric version, its
    annotators, the overlap and the guidelines annotators read first."""

    uuid = models.UUIDField(default=uuid_lib.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=120)
    # What the queue's items are: designs (content hashes), episodes (uuids) or steps
    # ("<episode uuid>:<index>"), kept in `designs` in the order they are served.
    item_kind = models.CharField(max_length=10, choices=ItemKind.choices,
                                 default=ItemKind.DESIGN)
    guidelines = models.TextField(blank=True)
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="queues")
    kind = models.CharField(max_length=10, choices=QueueKind.choices, default=QueueKind.SINGLE)
    # Pairwise: the key of the rubric question the pair is judged on.
    pair_question = models.CharField(max_length=40, blank=True)
    overlap = models.PositiveSmallIntegerField(default=1)
    # What the items were chosen by (shown on the page) and the items themselves (for a design
    # queue content hashes, in the order they are served); pairwise queues also store pairs.
    selection = models.JSONField(default=dict, blank=True)
    designs = models.JSONField(default=list)
    pairs = models.JSONField(default=list, blank=True)
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="annotation_queues"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1, overlap__lte=20),
                                   name="queue_overlap_1_to_20"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_pairwise(self) -> bool:
        return self.kind == QueueKind.PAIRWISE


class Answer(models.Model):
    """One annotator's answers to one rubric version for one design (`design_b` empty), or,
    in a pairwise queue, a choice between two designs (`choice`: a, b or tie)."""

    uuid = models.UUIDField(default=uuid_lib.uuid4, unique=True, editable=False)
    queue = models.ForeignKey(AnnotationQueue, on_delete=models.CASCADE, related_name="answers")
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="answers")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rubric_answers"
    )
    design = models.CharField(max_length=64, db_index=True)
    design_b = models.CharField(max_length=64, blank=True)
    values = models.JSONField(default=dict, blank=True)
    choice = models.CharField(max_length=4, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "annotator", "design", "design_b"],
                                    name="answer_once_per_item"),
            models.CheckConstraint(condition=Q(choice__in=["", "a", "b", "tie"]),
                                   name="answer_choice_known"),
        ]

    def __str__(self) -> str:
        return f"answer by {self.annotator} on {self.design[:12]}"


class Adjudication(models.Model):
    """The label a staff member settled on for one question of one design in a queue."""

    uuid = models.UUIDField(default=uuid_lib.uuid4, unique=True, editable=False)
    queue = models.ForeignKey(AnnotationQueue, on_delete=models.CASCADE,
                              related_name="adjudications")
    design = models.CharField(max_length=64, db_index=True)
    question = models.CharField(max_length=40)
    value = models.JSONField(null=True)
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "design", "question"],
                                    name="adjudication_once"),
        ]

    def __str__(self) -> str:
        return f"{self.question} on {self.design[:12]}"


class QueueResults(models.Model):
    """A queue's agreement or ranking, computed once per revision of its answers (the
    results page reads it instead of recomputing; duels/services/queue_results.py)."""

    queue = models.ForeignKey(AnnotationQueue, on_delete=models.CASCADE,
                              related_name="computed_results")
    kind = models.CharField(max_length=16)  # "agreement" or "ranking"
    revision = models.CharField(max_length=200, blank=True)  # of `data`
    data = models.JSONField(null=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    pending = models.CharField(max_length=200, blank=True)  # a revision being computed

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "kind"], name="queue_results_once"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of {self.queue_id} at {self.revision}"
