"""A player's evaluation on a panel: it plays every (version, seed, condition) of the panel it
has not played yet, resumably; its plays are episodes of their own (`Episode.evaluation`, no duel
and no study), and the panel's ranking places it beside every player that played the panel.

One evaluation per (panel, player, hint level): evaluating the same player again on the same
panel goes on with the same evaluation, keeping what was played and playing again what was left
incomplete.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from duels.models.common import DONE_STATUSES, Status
from duels.models.panels import Panel
from duels.models.players import Player


class Evaluation(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    # PROTECT: a panel evaluated on is never deleted under its evaluations.
    panel = models.ForeignKey(Panel, on_delete=models.PROTECT, related_name="evaluations")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="evaluations")
    # The selection last asked for: the first n benchmark seeds of each version and the first
    # m versions of the panel (None: all of them), as the original's evaluator reads them.
    seeds_per_environment = models.PositiveIntegerField(null=True, blank=True)
    environments_limit = models.PositiveIntegerField(null=True, blank=True)
    # The hint level of the hinted plays (1: `hint` or `hint_1`; 2: `hint_2`).
    hint_level = models.PositiveSmallIntegerField(default=1)
    concurrency = models.PositiveIntegerField(default=4)
    cost_cap = models.FloatField(null=True, blank=True, help_text="USD; stop new calls beyond it")
    cost = models.FloatField(default=0.0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["panel", "player", "hint_level"],
                                    name="evaluation_one_per_player_and_level"),
            models.CheckConstraint(condition=Q(hint_level__gte=1) & Q(hint_level__lte=2),
                                   name="evaluation_hint_level"),
        ]

    def __str__(self) -> str:
        return f"{self.player} on {self.panel}"

    @property
    def is_done(self) -> bool:
        return self.status in DONE_STATUSES


class PanelFigures(models.Model):
    """The panel's ranking as last computed (duels/panels/ranking.py), kept apart from the panel
    (which never changes once evaluated on), with the fingerprint of the data it describes."""

    panel = models.OneToOneField(Panel, on_delete=models.CASCADE, related_name="figures")
    figures = models.JSONField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
