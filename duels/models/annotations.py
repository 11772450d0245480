"""People's notes on environments, episodes and steps."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q

from duels.annotation_defaults import STARTER_LABELS
from duels.models.environments import Environment
from duels.models.episodes import Episode


class TargetKind(models.TextChoices):
    ENVIRONMENT = "environment", "environment"
    EPISODE = "episode", "episode"
    STEP = "step", "step"


STARTER_TAGS = STARTER_LABELS


class Annotation(models.Model):
    """A person's note on an environment design, an episode, or one step of an episode."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    target_kind = models.CharField(max_length=16, choices=TargetKind.choices)
    environment = models.ForeignKey(
        Environment, null=True, blank=True, on_delete=models.CASCADE, related_name="annotations"
    )
    episode = models.ForeignKey(
        Episode, null=True, blank=True, on_delete=models.CASCADE, related_name="annotations"
    )
    step_index = models.PositiveIntegerField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    tags = models.JSONField(default=list, blank=True)
    rating = models.PositiveSmallIntegerField(null=True, blank=True)
    text = models.TextField(blank=True)
    line_start = models.PositiveIntegerField(null=True, blank=True)
    line_end = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["environment", "-created_at"], name="ann_env"),
            models.Index(fields=["episode", "step_index"], name="ann_episode_step"),
            models.Index(fields=["author", "-created_at"], name="ann_author"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(rating__isnull=True) | Q(rating__gte=1, rating__lte=5),
                name="annotation_rating_1_to_5",
            ),
            models.CheckConstraint(
                condition=Q(line_start__isnull=True)
                | Q(line_end__isnull=True)
                | Q(line_start__lte=F("line_end")),
                name="annotation_line_range_ordered",
            ),
            models.CheckConstraint(
                condition=(
                    Q(target_kind="environment", environment__isnull=False, episode__isnull=True)
                    | Q(
                        target_kind="episode",
                        episode__isnull=False,
                        environment__isnull=True,
                        step_index__isnull=True,
                    )
                    | Q(
                        target_kind="step",
                        episode__isnull=False,
                        environment__isnull=True,
                        step_index__isnull=False,
                    )
                ),
                name="annotation_target_matches_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_target_kind_display()} note by {self.author}"

    def clean(self) -> None:
        if self.rating is not None and not 1 <= self.rating <= 5:
            raise ValidationError({"rating": "Rating is from 1 to 5."})
        if (
            self.line_start is not None
            and self.line_end is not None
            and self.line_start > self.line_end
        ):
            raise ValidationError({"line_end": "The range must end on or after its first line."})
