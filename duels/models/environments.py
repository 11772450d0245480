"""Environments written by setters, and the privileged hints attached to them."""

from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError
from django.db import models

from duels.analytics.designs import content_hash, design_source  # noqa: F401 (re-exported)
from duels.models.players import Player


class EnvironmentStatus(models.TextChoices):
    PENDING = "pending", "not validated yet"
    VALID = "valid", "valid"
    INVALID = "invalid", "invalid"


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
