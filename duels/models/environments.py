"""Environments written by setters, and the privileged hints attached to them."""

from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from duels.analytics.designs import content_hash, design_source  # noqa: F401 (re-exported)
from duels.models.players import Player
from duels.models.studies import Study


class EnvironmentStatus(models.TextChoices):
    PENDING = "pending", "not validated yet"
    VALID = "valid", "valid"
    INVALID = "invalid", "invalid"


class Contract(models.TextChoices):
    """Which interface the source implements; the sandbox's guest adapts the others."""

    ENVDUELS = "envduels", "EnvDuels' environment contract"
    # The original harness's class: `Cls(max_turns=)`, `reset(seed=)` -> (observation, info),
    # `step(action)` -> (observation, reward, terminated, truncated, info), `\boxed{}` actions.
    ENVDUELS_V1 = "envduels-v1", "an envduels-v1 class"


class Environment(models.Model):
    """Python source implementing the environment contract, plus its validation report."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    title = models.CharField(max_length=200)
    author = models.ForeignKey(
        Player, null=True, blank=True, on_delete=models.PROTECT, related_name="environments"
    )
    source = models.TextField()
    # The design key: environments with the same content hash are one design.
    content_hash = models.CharField(max_length=64, db_index=True, editable=False)
    family = models.CharField(max_length=60, blank=True, db_index=True)
    status = models.CharField(
        max_length=16, choices=EnvironmentStatus.choices, default=EnvironmentStatus.PENDING
    )
    validation = models.JSONField(null=True, blank=True)
    max_steps = models.PositiveIntegerField(null=True, blank=True)
    # The kind of environment its slot asked for; the family for environments outside a study.
    domain = models.CharField(max_length=60, blank=True, db_index=True)
    # Drawn once and stored: every solver plays these seeds in both conditions.
    benchmark_seeds = models.JSONField(null=True, blank=True)
    # A study's slot (`env_003`) and this version's place in its lineage: 0 is the first
    # version, n its n-th revision after play (`env_003/harden_0n`), pointing at `parent`.
    study = models.ForeignKey(
        Study, null=True, blank=True, on_delete=models.CASCADE, related_name="environments"
    )
    slot = models.CharField(max_length=40, blank=True)
    revision = models.PositiveSmallIntegerField(default=0)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="revisions"
    )
    # Imported classes keep their own interface; the guest adapts it (`sandbox_adapter`).
    contract = models.CharField(max_length=20, choices=Contract.choices,
                                default=Contract.ENVDUELS)
    class_name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["author", "-created_at"], name="env_author_created"),
            models.Index(fields=["status"], name="env_status"),
            models.Index(fields=["study", "slot", "revision"], name="env_study_slot"),
        ]
        constraints = [
            # One environment per version of a study's slot: a second driver's answer for the
            # same version is never stored beside the first.
            models.UniqueConstraint(fields=["study", "author", "slot", "revision"],
                                    condition=models.Q(study__isnull=False),
                                    name="env_unique_study_version"),
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

    @property
    def version(self) -> str:
        """The version's name as the original harness names it (`env_003/harden_01`)."""
        return version_name(slot=self.slot, revision=self.revision)

    @property
    def domain_or_family(self) -> str:
        return self.domain or self.family

    @property
    def sandbox_adapter(self) -> dict | None:
        """What the sandbox's guest needs to play this source (None: EnvDuels' own contract).

        Every path that opens a sandbox for a stored environment passes it to open_sandbox."""
        return environment_adapter(contract=self.contract, class_name=self.class_name,
                                   max_steps=self.max_steps)


def voided_after_play(prefix: str = "") -> Q:
    """Environments voided after play (duels.engine.voiding); `prefix` reaches them through a
    relation (`environment__`)."""
    return Q(**{f"{prefix}status": EnvironmentStatus.INVALID,
                f"{prefix}validation__has_key": "after_play"})


def report_invalid_reason(report: dict | None) -> str:
    """The failed checks of a validation report as one line a person can act on."""
    if (report or {}).get("error"):
        return f"invalid environment — {report['error']}"
    after_play = (report or {}).get("after_play")
    if isinstance(after_play, dict):
        return f"invalid environment — voided after play: {after_play.get('reason', '')}"
    checks = (report or {}).get("checks", [])
    failed = [f"{check['name']}: {check.get('detail', '')}".strip(": ")
              for check in checks if not check.get("passed")]
    return "invalid environment — " + ("; ".join(failed) if failed else "validation failed")


def version_name(*, slot: str, revision: int) -> str:
    """`env_003` for a slot's first version, `env_003/harden_0n` for its n-th revision."""
    if not slot:
        return ""
    return slot if revision == 0 else f"{slot}/harden_{revision:02d}"


def environment_adapter(*, contract: str, class_name: str, max_steps: int | None) -> dict | None:
    """The guest's adapter for a source of `contract` (None for EnvDuels' own)."""
    if contract != Contract.ENVDUELS_V1:
        return None
    return {"format": "envduels-v1", "class_name": class_name, "max_turns": max_steps or 30}


class Hint(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="hints")
    author = models.ForeignKey(
        Player, null=True, blank=True, on_delete=models.PROTECT, related_name="hints"
    )
    text = models.TextField()
    # Graded hints as the original harness reads them: level 1 (`hint` or `hint_1`) is played
    # unless another level is chosen; level 2 (`hint_2`) says more.
    level = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return self.text[:60]
