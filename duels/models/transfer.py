"""Imported transfer results and cached analytics snapshots."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from duels.models.environments import Environment
from duels.models.players import Player


class TransferResult(models.Model):
    """An imported measurement: a learner's benchmark score before/after training on an env."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    learner = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="transfer_results")
    environment = models.ForeignKey(
        Environment, null=True, blank=True, on_delete=models.CASCADE, related_name="transfers"
    )
    author = models.ForeignKey(
        Player, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    benchmark = models.CharField(max_length=200)
    before = models.FloatField()
    after = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(environment__isnull=False) | Q(author__isnull=False),
                name="transfer_names_environment_or_author",
            )
        ]

    @property
    def improvement(self) -> float:
        return self.after - self.before


class AnalyticsSnapshot(models.Model):
    """Cached analytics figures, recomputed in the background when duels finish."""

    computed_at = models.DateTimeField(auto_now_add=True)
    data = models.JSONField()
    duration_ms = models.PositiveIntegerField(default=0)
    # What the figures were computed from (highest ids and counts of the rows they read); a
    # snapshot whose fingerprint differs from the data now, or that a write marked stale, is
    # recomputed before anyone reads it as current.
    fingerprint = models.JSONField(default=dict, blank=True)
    stale = models.BooleanField(default=False)

    class Meta:
        ordering = ["-computed_at"]
        get_latest_by = "computed_at"
