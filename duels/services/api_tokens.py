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
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from duels.models import ApiToken, TokenScope
from duels.selectors.api_tokens import (
    DEACTIVATED_MARK,
    api_token_find,
    api_token_hash,
    password_mark,
)

TOKEN_PREFIX = "edt_"


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


def api_tokens_end_for_deactivated(*, user: AbstractBaseUser) -> int:
    """End every token of `user`, who is being deactivated, for good; return how many."""
    return ApiToken.objects.filter(user_id=user.pk).exclude(
        password_mark=DEACTIVATED_MARK).update(password_mark=DEACTIVATED_MARK)


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
