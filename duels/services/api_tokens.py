"""Read-API tokens: created once (shown once), stored as SHA-256 only, revocable."""

from __future__ import annotations

import hashlib
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from duels.models import ApiToken

TOKEN_PREFIX = "edt_"


def api_token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def api_token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """Make a token for `user`; return it with the raw secret, which is not stored anywhere."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name[:100], token_hash=api_token_hash(raw))
    return token, raw


def api_token_authenticate(*, raw: str) -> AbstractBaseUser | None:
    """The active user a raw token belongs to (and note its use), or None."""
    token = (
        ApiToken.objects.select_related("user").filter(token_hash=api_token_hash(raw)).first()
    )
    if token is None or not token.user.is_active:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user


def api_token_list(*, user: AbstractBaseUser | None = None) -> QuerySet[ApiToken]:
    tokens = ApiToken.objects.select_related("user").order_by("-created_at", "-pk")
    return tokens if user is None else tokens.filter(user=user)


def api_token_revoke(*, token: ApiToken) -> None:
    token.delete()
