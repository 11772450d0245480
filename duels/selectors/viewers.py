"""Whether whoever opened an episode stream may still watch it: their token still works, or
their session still exists for the same password, and their account is active."""

from __future__ import annotations

from importlib import import_module

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare

from duels.selectors.api_tokens import api_token_find


def viewer_still_allowed(*, token: str | None, session_key: str | None, user_pk: int) -> bool:
    """True while the credentials a stream was opened with still hold (token, else session,
    else only the account: a stream opened without either, as tests do)."""
    if token is not None:
        return api_token_find(raw=token) is not None
    user = get_user_model().objects.filter(pk=user_pk, is_active=True).first()
    if user is None:
        return False
    if session_key is None:
        return True
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key).load()
    return str(session.get(SESSION_KEY)) == str(user.pk) and constant_time_compare(
        session.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash()
    )
