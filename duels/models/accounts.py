"""Failed sign-ins, kept briefly so repeated guessing is throttled per account and per address."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class SignInFailure(models.Model):
    """One failed sign-in: the username tried and the address it came from."""

    username = models.CharField(max_length=150)
    address = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["username", "created_at"], name="signin_fail_user"),
            models.Index(fields=["address", "created_at"], name="signin_fail_address"),
        ]

    def __str__(self) -> str:
        return f"failed sign-in as {self.username} from {self.address or 'unknown address'}"
