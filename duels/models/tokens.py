"""API tokens: the read API, episode streams and (scope `operate`) the operations endpoints."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TokenScope(models.TextChoices):
    READ = "read", "read: the API and episode streams"
    OPERATE = "operate", "operate: also /metrics and /healthz details (staff users)"


class ApiToken(models.Model):
    """An API token. Only its SHA-256 is stored; the token is shown once on creation.

    `password_mark` ties it to the password its user had when it was made: a new password
    (or a deactivated account) ends it, as it ends the user's sessions."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=16, choices=TokenScope.choices, default=TokenScope.READ)
    expires_at = models.DateTimeField(null=True, blank=True)
    password_mark = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
