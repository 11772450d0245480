"""Reading API tokens: the stored hash of a secret, the password mark, a token's state, the
working token a secret names (writes are duels.services.api_tokens')."""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from duels.models import ApiToken


def api_token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def password_mark(user: AbstractBaseUser) -> str:
    """A digest of the user's stored password hash: it changes with the password."""
    return hashlib.sha256(f"envduels-api-token:{user.password}".encode()).hexdigest()


# The mark of a token whose user was deactivated: no password gives it, so it never works again.
DEACTIVATED_MARK = "ended: the user was deactivated"


def api_token_state(*, token: ApiToken) -> str:
    """`active`, or why the token no longer works."""
    if not token.user.is_active:
        return "ended: the user is deactivated"
    if token.password_mark == DEACTIVATED_MARK:
        return "ended: the user was deactivated (reactivating does not revive tokens)"
    if token.password_mark != password_mark(token.user):
        return "ended: the user's password changed"
    if token.expires_at is not None and token.expires_at <= timezone.now():
        return f"expired {token.expires_at:%Y-%m-%d %H:%M} UTC"
    return "active"


def api_token_find(*, raw: str) -> ApiToken | None:
    """The working token `raw` names, with its user (nothing is written), or None."""
    if not raw:
        return None
    token = (
        ApiToken.objects.select_related("user").filter(token_hash=api_token_hash(raw)).first()
    )
    if token is None or api_token_state(token=token) != "active":
        return None
    return token
