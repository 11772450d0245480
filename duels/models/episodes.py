"""Episodes (one solver attempt) with their steps, and the model calls the engine made."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from duels.models.common import DONE_STATUSES, Status
from duels.models.duels import Duel
from duels.models.environments import Environment, Hint
from duels.models.evaluations import Evaluation
from duels.models.players import Player
from duels.models.studies import Study


class ModelCall(models.Model):
    """One setter-side model call (prompt, reply, tokens, latency), kept for audit."""

    class Role(models.TextChoices):
        SETTER = "setter", "setter"
        REPAIR = "repair", "setter repair"
        CHECK = "check", "player check"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    duel = models.ForeignKey(
        Duel, null=True, blank=True, on_delete=models.CASCADE, related_name="model_calls"
    )
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="model_calls"
    )
    # The environment this setter answer became, once it was read (setter data leaves with it).
    environment = models.ForeignKey(
        Environment, null=True, blank=True, on_delete=models.SET_NULL, related_name="model_calls"
    )
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="model_calls")
    role = models.CharField(max_length=16, choices=Role.choices)
    messages = models.JSONField(default=list)
    reply = models.TextField(blank=True)
    # Reasoning the model returned apart from its reply (Anthropic thinking, reasoning_content);
    # calls stored before this field existed have none.
    thinking = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]


class Condition(models.TextChoices):
    UNHINTED = "unhinted", "unhinted"
    HINTED = "hinted", "hinted"


class EndReason(models.TextChoices):
    DONE = "done", "environment said done"
    MAX_STEPS = "max_steps", "step limit reached"
    TOKEN_BUDGET = "token_budget", "token budget spent"
    TIME_BUDGET = "time_budget", "time budget spent"
    COST_CAP = "cost_cap", "cost cap reached"
    # The conversation outgrew the solver's context window: the model's failure of the episode
    # (duels.players.context), counted as not passed like a step limit.
    CONTEXT_OVERFLOW = "context_overflow", "context window full"
    # An environment fault (its code raised, timed out, ran out of memory or output, or replayed
    # differently): the setter's responsibility, counted as not passed.
    ENV_ERROR = "env_error", "environment fault"
    # Infrastructure gave out for good (provider, sandbox backend, database, worker): the
    # episode is not a result; its duel ends failed, unscored.
    INFRA_ERROR = "infra_error", "infrastructure fault"
    # Older installations recorded these before the two above existed.
    SANDBOX_ERROR = "sandbox_error", "sandbox error"
    PLAYER_ERROR = "player_error", "player error"
    CANCELLED = "cancelled", "cancelled"


class Proof(models.TextChoices):
    """What the check after play (duels.engine.proof) found for an episode."""

    UNCHECKED = "", "not checked"
    PASSED = "passed", "replayed and checked"
    VOIDED = "voided", "voided its environment"
    SKIPPED = "skipped", "not checked (nothing played)"


class Episode(models.Model):
    """One solver attempt at one environment, hinted (hint set) or unhinted (hint null)."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    duel = models.ForeignKey(
        Duel, null=True, blank=True, on_delete=models.CASCADE, related_name="episodes"
    )
    # A field play of a study (no duel): the study's head-to-head results are derived from these.
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="episodes"
    )
    # A play of a panel evaluation (no duel, no study): the panel's ranking reads these.
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.CASCADE, related_name="episodes"
    )
    environment = models.ForeignKey(
        Environment, on_delete=models.CASCADE, related_name="episodes"
    )
    hint = models.ForeignKey(
        Hint, null=True, blank=True, on_delete=models.PROTECT, related_name="episodes"
    )
    condition = models.CharField(max_length=10, choices=Condition.choices)
    solver = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="episodes")
    seed = models.IntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    end_reason = models.CharField(max_length=20, choices=EndReason.choices, blank=True)
    success = models.BooleanField(null=True, blank=True)
    steps = models.PositiveIntegerField(default=0, help_text="Solver actions taken")
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    sandbox_backend = models.CharField(max_length=20, blank=True)
    # Sandbox timings (for /metrics): starting its sandbox, and all its sandbox calls together.
    sandbox_start_ms = models.PositiveIntegerField(default=0)
    sandbox_step_ms = models.PositiveIntegerField(default=0)
    prompt_version = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    # The check after play: its replay in a fresh sandbox, the paired run and the hint.
    proof = models.CharField(max_length=10, choices=Proof.choices, blank=True, default="")
    proof_ms = models.PositiveIntegerField(default=0)
    # Crash recovery: the worker running the episode renews the lease; an expired lease
    # on a running episode means its worker died and the episode may be resumed.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    resumes = models.PositiveIntegerField(default=0)
    infra_faults = models.PositiveIntegerField(
        default=0, help_text="Infrastructure faults retried so far (never counted as a result)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["duel", "environment", "condition", "seed"], name="ep_duel_cond"),
            models.Index(fields=["environment", "solver"], name="ep_env_solver"),
            models.Index(fields=["status", "lease_expires_at"], name="ep_status_lease"),
            models.Index(fields=["solver", "status"], name="ep_solver_status"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(condition="hinted") & Q(hint__isnull=False))
                | (Q(condition="unhinted") & Q(hint__isnull=True)),
                name="episode_condition_matches_hint",
            ),
            models.UniqueConstraint(
                fields=["duel", "environment", "solver", "condition", "seed"],
                condition=Q(duel__isnull=False),
                name="episode_unique_in_duel",
            ),
            models.UniqueConstraint(
                fields=["study", "environment", "solver", "condition", "seed"],
                condition=Q(study__isnull=False),
                name="episode_unique_in_study",
            ),
            models.UniqueConstraint(
                fields=["evaluation", "environment", "solver", "condition", "seed"],
                condition=Q(evaluation__isnull=False),
                name="episode_unique_in_evaluation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.solver} on {self.environment} ({self.condition}, seed {self.seed})"

    @property
    def hinted(self) -> bool:
        return self.condition == Condition.HINTED

    @property
    def is_done(self) -> bool:
        return self.status in DONE_STATUSES


class Step(models.Model):
    """One turn: step 0 is the reset; step n>0 is the solver's action and the answer."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="trajectory")
    index = models.PositiveIntegerField()
    observation = models.TextField(blank=True)
    reply = models.TextField(blank=True)
    action = models.TextField(blank=True)
    reward = models.FloatField(null=True, blank=True)
    done = models.BooleanField(default=False)
    success = models.BooleanField(default=False)
    latency_ms = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    format_error = models.TextField(blank=True)
    # Reasoning the model returned apart from its reply (Anthropic thinking, reasoning_content).
    thinking = models.TextField(blank=True)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    # Time inside the environment's own call for this step, and what the model call cost (USD):
    # the replay's timeline reads them per step.
    sandbox_ms = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["episode", "index"]
        constraints = [
            models.UniqueConstraint(fields=["episode", "index"], name="step_unique_index"),
        ]

    def __str__(self) -> str:
        return f"step {self.index} of {self.episode_id}"

    @property
    def is_format_reminder(self) -> bool:
        """The reply had no readable action: nothing reached the environment, and the
        observation is EnvDuels' format reminder. (Steps stored before replies without an
        action were held back kept the whole reply as their action and the environment's
        answer; they still count as format errors, not as reminders.)"""
        return step_is_format_reminder(format_error=self.format_error, action=self.action)


def step_is_format_reminder(*, format_error: str, action: str) -> bool:
    """The one rule for telling a format reminder from an environment's answer."""
    return bool(format_error) and not action
