"""Worker heartbeats: which task worker processes are alive, where, and what they serve."""

from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """One task worker process, renewed by its `manage.py worker` (or `serve`) supervisor.

    A row whose `last_seen_at` has not moved for a few heartbeats belongs to a dead worker: its
    task rows left RUNNING are reaped and the row is removed.
    """

    worker_id = models.CharField(max_length=120, unique=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    supervisor_pid = models.PositiveIntegerField()
    queues = models.CharField(max_length=255, help_text="Comma-separated task queues served")
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()

    class Meta:
        ordering = ["host", "started_at", "worker_id"]
        indexes = [models.Index(fields=["last_seen_at"], name="worker_last_seen")]

    def __str__(self) -> str:
        return f"{self.worker_id} ({self.queues})"

    @property
    def queue_list(self) -> list[str]:
        return [name for name in self.queues.split(",") if name]
