"""Per-environment estimates of the joint item-response model, stored with each analytics refresh.

They live in the database (not only in the snapshot) so the environments list can filter and sort
by difficulty and hint effect in SQL, and exports can carry them.
"""

from __future__ import annotations

from django.db import models

from duels.models.environments import Environment


class EnvironmentEstimate(models.Model):
    """Difficulty b and hint effect γ (logit scale) of one environment, with 95% intervals."""

    environment = models.OneToOneField(
        Environment, primary_key=True, on_delete=models.CASCADE, related_name="estimate"
    )
    difficulty = models.FloatField(null=True)
    difficulty_low = models.FloatField(null=True)
    difficulty_high = models.FloatField(null=True)
    hint_effect = models.FloatField(null=True)
    hint_effect_low = models.FloatField(null=True)
    hint_effect_high = models.FloatField(null=True)
    # Expected setter score p_h·(1 − p_u) against the field of solvers under the fitted model.
    field_setter_score = models.FloatField(null=True)
    episodes = models.PositiveIntegerField(default=0)
    # The design's training value (duels.analytics.training_value) and its parts, figures and,
    # when it has none, the reason; null before the design has episodes.
    training_value = models.FloatField(null=True)
    training = models.JSONField(null=True)
    computed_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["difficulty"], name="estimate_difficulty"),
            models.Index(fields=["hint_effect"], name="estimate_hint_effect"),
            models.Index(fields=["field_setter_score"], name="estimate_setter_score"),
            models.Index(fields=["training_value"], name="estimate_training_value"),
        ]

    def __str__(self) -> str:
        return f"estimate of environment {self.environment_id}"
