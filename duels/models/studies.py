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
    # Progress, stored by the work loop when it changes (the list and the page read these).
    slots_total = models.PositiveIntegerField(default=0)
    slots_done = models.PositiveIntegerField(default=0)
    episodes_total = models.PositiveIntegerField(default=0)
    episodes_done = models.PositiveIntegerField(default=0)
    episodes_running = models.PositiveIntegerField(default=0)
    # The study's figures as last computed (duels/studies/figures.py), and what they were
    # computed from: the page answers from them while the fingerprint still matches the data.
    figures = models.JSONField(null=True, blank=True)
    figures_fingerprint = models.CharField(max_length=64, blank=True)
    figures_computed_at = models.DateTimeField(null=True, blank=True)
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

    @property
    def progress_percent(self) -> int:
        """Share of the field plays scheduled so far that ended, and of the slots that ended."""
        work = self.episodes_total + self.slots_total
        if not work:
            return 0
        return round(100 * (self.episodes_done + self.slots_done) / work)


class SlotPhase(models.TextChoices):
    AUTHORING = "authoring", "authoring"  # its next version is being written and validated
    PLAYING = "playing", "field play"  # the field plays its latest version
    DONE = "done", "done"


class StudySlot(models.Model):
    """One environment slot of one author in a study, and the work on it.

    A slot's life: authoring its first version (under a lease, as a duel's authoring) → the
    field plays it → authoring its next revision from a digest of that play → played again …
    until `harden_rounds` revisions were played, or a version failed validation (the previous
    valid version stays final). `revision` is the version being authored or played now.
    """

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="slots")
    author = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="study_slots")
    slot = models.CharField(max_length=40)  # env_001 …
    domain = models.CharField(max_length=60)
    position = models.PositiveIntegerField(default=0)
    revision = models.PositiveSmallIntegerField(default=0)
    phase = models.CharField(max_length=12, choices=SlotPhase.choices,
                             default=SlotPhase.AUTHORING)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Why the lineage stopped early or which version failed (shown on the page).
    note = models.TextField(blank=True)
    error = models.TextField(blank=True)
    # The authoring lease, as on a duel: held (and renewed) by the worker writing a version.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    infra_faults = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "position"]
        indexes = [models.Index(fields=["study", "phase", "status"], name="slot_study_phase")]
        constraints = [
            models.UniqueConstraint(fields=["study", "author", "slot"], name="slot_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.author}/{self.slot}"

    @property
    def is_done(self) -> bool:
        return self.status in DONE_STATUSES

    @property
    def lineage(self) -> str:
        """The lineage key the figures use: `author/env_003`."""
        return f"{self.author.name}/{self.slot}"
