"""The status vocabulary shared by tournaments, duels and episodes."""

from __future__ import annotations

from django.db import models


class Status(models.TextChoices):
    """One status vocabulary for tournaments, duels and episodes."""

    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


DONE_STATUSES = (Status.FINISHED, Status.FAILED, Status.CANCELLED)
