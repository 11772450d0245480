"""Tournaments and duels: who plays whom, with what environments, and how it ended."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q

from duels.models.common import DONE_STATUSES, Status
from duels.models.environments import Environment, Hint
from duels.models.players import Player


class Tournament(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    players = models.ManyToManyField(Player, related_name="tournaments")
    rounds = models.PositiveIntegerField(default=1)
    attempts = models.PositiveIntegerField(default=4)
    observe = models.BooleanField(default=False)
    concurrency = models.PositiveIntegerField(default=4)
    cost_cap = models.FloatField(null=True, blank=True, help_text="USD; stop new calls beyond it")
    cost = models.FloatField(default=0.0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    duels_total = models.PositiveIntegerField(default=0)
    duels_done = models.PositiveIntegerField(default=0)
    episodes_running = models.PositiveIntegerField(default=0)
    prompt_version = models.CharField(max_length=20, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "-created_at"], name="tournament_status")]
        constraints = [
            models.CheckConstraint(condition=Q(rounds__gte=1), name="tournament_rounds_positive"),
            models.CheckConstraint(condition=Q(attempts__gte=1), name="tournament_attempts_pos"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def progress_percent(self) -> int:
        if not self.duels_total:
            return 0
        return round(100 * self.duels_done / self.duels_total)

    @property
    def is_done(self) -> bool:
        return self.status in DONE_STATUSES


class Outcome(models.TextChoices):
    A = "a", "A wins"
    B = "b", "B wins"
    DRAW = "draw", "draw"


class Duel(models.Model):
    """A vs B: each authors an environment + hint, each solves the other's."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tournament = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.CASCADE, related_name="duels"
    )
    round_index = models.PositiveIntegerField(default=0)
    a = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="duels_as_a")
    b = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="duels_as_b")
    env_a = models.ForeignKey(
        Environment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    env_b = models.ForeignKey(
        Environment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    hint_a = models.ForeignKey(
        Hint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    hint_b = models.ForeignKey(
        Hint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    attempts = models.PositiveIntegerField(default=4)
    observe = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    outcome = models.CharField(max_length=8, choices=Outcome.choices, null=True, blank=True)
    # Derived from episodes (duel_score); side "a" = A as setter, B as solver.
    p_unhinted_a = models.FloatField(null=True, blank=True)
    p_hinted_a = models.FloatField(null=True, blank=True)
    setter_score_a = models.FloatField(null=True, blank=True)
    flips_a = models.PositiveIntegerField(null=True, blank=True)
    forfeit_a = models.TextField(blank=True)
    p_unhinted_b = models.FloatField(null=True, blank=True)
    p_hinted_b = models.FloatField(null=True, blank=True)
    setter_score_b = models.FloatField(null=True, blank=True)
    flips_b = models.PositiveIntegerField(null=True, blank=True)
    forfeit_b = models.TextField(blank=True)
    # Why a side was voided after play (its environment was not the same puzzle on the path a
    # solver played, or showed the hint unasked: duels.engine.proof), "" when it was not. A
    # voided side scores 0 for its setter, like a forfeit, and none of its episodes counts.
    void_a = models.TextField(blank=True)
    void_b = models.TextField(blank=True)
    cost_cap = models.FloatField(null=True, blank=True)
    cost = models.FloatField(default=0.0)
    prompt_version = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    # Crash recovery for authoring: the worker authoring the two environments holds this lease
    # and renews it; an expired lease on a running duel without episodes means that worker
    # died, and another worker authors the duel again.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    infra_faults = models.PositiveIntegerField(
        default=0, help_text="Infrastructure faults during authoring retried so far"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["tournament", "status"], name="duel_tournament_status"),
            models.Index(fields=["status", "-created_at"], name="duel_status_created"),
            models.Index(fields=["created_by", "-created_at"], name="duel_creator_created"),
        ]
        constraints = [
            models.CheckConstraint(condition=~Q(a=F("b")), name="duel_players_differ"),
            models.CheckConstraint(condition=Q(attempts__gte=1), name="duel_attempts_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.a} vs {self.b}"

    def clean(self) -> None:
        if self.a_id is not None and self.a_id == self.b_id:
            raise ValidationError("A duel needs two different players.")

    @property
    def hint_gain_a(self) -> float | None:
        if self.p_hinted_a is None or self.p_unhinted_a is None:
            return None
        return self.p_hinted_a - self.p_unhinted_a

    @property
    def hint_gain_b(self) -> float | None:
        if self.p_hinted_b is None or self.p_unhinted_b is None:
            return None
        return self.p_hinted_b - self.p_unhinted_b

    @property
    def is_done(self) -> bool:
        return self.status in DONE_STATUSES
