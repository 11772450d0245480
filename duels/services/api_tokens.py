"""API tokens: created once (shown once), stored as SHA-256 only, scoped, optionally expiring,
revocable, and ended by their user's new password or deactivation.

A token of scope `read` opens the read API and episode streams; `operate` also the operations
endpoints (`/metrics`, `/healthz` details), which further need a staff user. A password change
or a deactivated account ends every token of that user, however it happened (the password page,
the admin, `manage.py changepassword`): each token keeps a mark of the password it was made
under and stops working when the mark no longer matches.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from duels.models import ApiToken, TokenScope

TOKEN_PREFIX = "edt_"


def api_token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def password_mark(user: AbstractBaseUser) -> str:
    """A digest of the user's stored password hash: it changes with the password."""
    return hashlib.sha256(f"envduels-api-token:{user.password}".encode()).hexdigest()


def api_token_create(*, user: AbstractBaseUser, name: str, scope: str = TokenScope.READ,
                     expires_at: dt.datetime | None = None) -> tuple[ApiToken, str]:
    """Make a token for `user`; return it with the raw secret, which is not stored anywhere."""
    if scope not in TokenScope.values:
        raise ValueError(f"scope must be one of {', '.join(TokenScope.values)}, not {scope!r}")
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name[:100], token_hash=api_token_hash(raw), scope=scope,
        expires_at=expires_at, password_mark=password_mark(user),
    )
    return token, raw


# The mark of a token whose user was deactivated: no password gives it, so it never works again.
DEACTIVATED_MARK = "ended: the user was deactivated"


def api_tokens_end_for_deactivated(*, user: AbstractBaseUser) -> int:
    """End every token of `user`, who is being deactivated, for good; return how many."""
    return ApiToken.objects.filter(user_id=user.pk).exclude(
        password_mark=DEACTIVATED_MARK).update(password_mark=DEACTIVATED_MARK)


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


def api_token_authenticate(*, raw: str, scope: str = TokenScope.READ) -> AbstractBaseUser | None:
    """The user a working token of `scope` (or a wider one) belongs to, noting its use; or
    None."""
    token = api_token_find(raw=raw)
    if token is None or (scope == TokenScope.OPERATE and token.scope != TokenScope.OPERATE):
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user


def api_token_list(*, user: AbstractBaseUser | None = None) -> QuerySet[ApiToken]:
    tokens = ApiToken.objects.select_related("user").order_by("-created_at", "-pk")
    return tokens if user is None else tokens.filter(user=user)


def api_token_revoke(*, token: ApiToken) -> None:
    token.delete()
