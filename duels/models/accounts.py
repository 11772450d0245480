"""Failed sign-ins, kept briefly so repeated guessing is throttled per account and per address."""

from __future__ import annotations

from django.conf import settings
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


class RateBucket(models.Model):
    """A user's allowance of one kind of request (`search`, `api`): a bucket of `tokens`
    refilled continuously to its size, each request taking one (duels.services.rate_limits)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16)
    tokens = models.FloatField()
    updated_at = models.FloatField(help_text="when `tokens` was computed, seconds since 1970")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="rate_bucket_user_kind"),
        ]
