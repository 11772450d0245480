"""Environments written by setters, and the privileged hints attached to them."""

from __future__ import annotations

import hashlib
import uuid

from django.core.exceptions import ValidationError
from django.db import models

from duels.models.players import Player


class EnvironmentStatus(models.TextChoices):
    PENDING = "pending", "not validated yet"
    VALID = "valid", "valid"
    INVALID = "invalid", "invalid"


def design_source(source: str) -> str:
    """The source as a design sees it: line endings as `\\n`, no trailing whitespace on any
    line, no blank lines at the end. Copies that differ only in these are one design."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip("\n")


def content_hash(source: str) -> str:
    """SHA-256 of the design source: the design's identity, the same in every installation."""
    return hashlib.sha256(design_source(source).encode("utf-8")).hexdigest()


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
