"""EnvDuels data model. Names follow DESIGN.md (vocabulary and exchange table)."""

from __future__ import annotations

import hashlib
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q


class Status(models.TextChoices):
    """One status vocabulary for tournaments, duels and episodes."""

    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


DONE_STATUSES = (Status.FINISHED, Status.FAILED, Status.CANCELLED)


class Provider(models.TextChoices):
    BUILTIN = "builtin", "built-in (scripted)"
    ANTHROPIC = "anthropic", "Anthropic"
    OPENAI = "openai", "OpenAI"
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible server"


class Player(models.Model):
    """A configured model. Holds the *name* of its API-key variable, never the key."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=100, unique=True)
    provider = models.CharField(max_length=32, choices=Provider.choices)
    model = models.CharField(max_length=200)
    base_url = models.URLField(max_length=500, blank=True)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="Name of the environment variable holding the API key (never the key).",
    )
    params = models.JSONField(default=dict, blank=True)
    price_in = models.FloatField(default=0.0, help_text="USD per 1M input tokens")
    price_out = models.FloatField(default=0.0, help_text="USD per 1M output tokens")
    builtin = models.BooleanField(default=False)
    max_concurrency = models.PositiveIntegerField(
        default=4, help_text="Completions in flight at once for this player."
    )
    description = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(price_in__gte=0) & Q(price_out__gte=0), name="player_prices_nonnegative"
            ),
            models.CheckConstraint(
                condition=~Q(provider="builtin") | Q(builtin=True),
                name="player_builtin_flag_matches_provider",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return f"{self.name} (built-in, scripted)" if self.builtin else self.name

    def cost_of(self, *, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1_000_000


class EnvironmentStatus(models.TextChoices):
    PENDING = "pending", "not validated yet"
    VALID = "valid", "valid"
    INVALID = "invalid", "invalid"


def content_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


class Environment(models.Model):
    """Python source implementing the environment contract, plus its validation report."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    title = models.CharField(max_length=200)
    author = models.ForeignKey(
        Player, null=True, blank=True, on_delete=models.PROTECT, related_name="environments"
    )
    source = models.TextField()
    content_hash = models.CharField(max_length=64, db_index=True, editable=False)
    family = models.CharField(max_length=60, blank=True, db_index=True)
    status = models.CharField(
        max_length=16, choices=EnvironmentStatus.choices, default=EnvironmentStatus.PENDING
    )
    validation = models.JSONField(null=True, blank=True)
    max_steps = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["author", "-created_at"], name="env_author_created"),
            models.Index(fields=["status"], name="env_status"),
        ]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        if len(self.source.encode("utf-8")) > 64 * 1024:
            raise ValidationError({"source": "Environment source is limited to 64 KiB."})

    def save(self, *args, **kwargs) -> None:
        # Keep the hash a pure function of the stored source.
        self.content_hash = content_hash(self.source)
        super().save(*args, **kwargs)

    @property
    def is_valid(self) -> bool:
        return self.status == EnvironmentStatus.VALID


class Hint(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="hints")
    author = models.ForeignKey(
        Player, null=True, blank=True, on_delete=models.PROTECT, related_name="hints"
    )
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return self.text[:60]


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
    cost_cap = models.FloatField(null=True, blank=True)
    cost = models.FloatField(default=0.0)
    prompt_version = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    # Crash recovery for authoring: the worker authoring the two environments holds this lease
    # and renews it; an expired lease on a running duel without episodes means that worker
    # died, and another worker authors the duel again.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
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
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="model_calls")
    role = models.CharField(max_length=16, choices=Role.choices)
    messages = models.JSONField(default=list)
    reply = models.TextField(blank=True)
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
    SANDBOX_ERROR = "sandbox_error", "sandbox error"
    PLAYER_ERROR = "player_error", "player error"
    CANCELLED = "cancelled", "cancelled"


class Episode(models.Model):
    """One solver attempt at one environment, hinted (hint set) or unhinted (hint null)."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    duel = models.ForeignKey(
        Duel, null=True, blank=True, on_delete=models.CASCADE, related_name="episodes"
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
    cost = models.FloatField(default=0.0)
    sandbox_backend = models.CharField(max_length=20, blank=True)
    prompt_version = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    # Crash recovery: the worker running the episode renews the lease; an expired lease
    # on a running episode means its worker died and the episode may be resumed.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    resumes = models.PositiveIntegerField(default=0)
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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["episode", "index"]
        constraints = [
            models.UniqueConstraint(fields=["episode", "index"], name="step_unique_index"),
        ]

    def __str__(self) -> str:
        return f"step {self.index} of {self.episode_id}"


class TargetKind(models.TextChoices):
    ENVIRONMENT = "environment", "environment"
    EPISODE = "episode", "episode"
    STEP = "step", "step"


STARTER_TAGS = (
    "needs-hint",
    "hint-leaks-answer",
    "trivial",
    "impossible",
    "broken",
    "elegant",
    "duplicate-design",
)


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

    class Meta:
        ordering = ["-computed_at"]
        get_latest_by = "computed_at"


class ApiToken(models.Model):
    """A read-API token. Only its SHA-256 is stored; the token is shown once on creation."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
