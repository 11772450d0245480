"""Studies: a field run as the original Environment Duels harness ran the benchmark.

Every player writes `per_author` environments spread over the study's domains, each is revised
up to `harden_rounds` times after the field played it, and every player plays every version on
the version's benchmark seeds in both conditions. Head-to-head results are derived from those
plays, never run as duels of their own.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from duels.models.common import DONE_STATUSES, Status
from duels.models.players import Player

MAX_HARDEN_ROUNDS = 3


class Study(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    players = models.ManyToManyField(Player, related_name="studies")
    per_author = models.PositiveIntegerField(default=2, help_text="Environment slots per author")
    seeds = models.PositiveIntegerField(default=4, help_text="Benchmark seeds per environment")
    harden_rounds = models.PositiveIntegerField(default=1)
    # The study's domains, in order; each author's slots are spread over them.
    domains = models.JSONField(default=list)
    self_play = models.BooleanField(default=True, help_text="Authors play their own versions")
    observe = models.BooleanField(default=False)
    concurrency = models.PositiveIntegerField(default=4)
    cost_cap = models.FloatField(null=True, blank=True, help_text="USD; stop new calls beyond it")
    cost = models.FloatField(default=0.0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    prompt_version = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        indexes = [models.Index(fields=["status", "-created_at"], name="study_status")]
        constraints = [
            models.CheckConstraint(condition=Q(per_author__gte=1), name="study_per_author_pos"),
            models.CheckConstraint(condition=Q(seeds__gte=1), name="study_seeds_positive"),
            models.CheckConstraint(condition=Q(harden_rounds__lte=MAX_HARDEN_ROUNDS),
                                   name="study_harden_rounds_max"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_done(self) -> bool:
        return self.status in DONE_STATUSES
