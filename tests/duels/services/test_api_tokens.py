"""API tokens: a scope, an optional expiry, and an end when their user's password changes or
the user is deactivated (however that happens)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from duels.models import ApiToken, TokenScope
from duels.services.api_tokens import api_token_authenticate, api_token_create

pytestmark = pytest.mark.django_db


def api_status(client, raw: str) -> int:
    return client.get("/api/v1/players/", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code


def test_a_token_expires(client, owner):
    _, lasting = api_token_create(user=owner, name="week",
                                  expires_at=timezone.now() + timedelta(days=7))
    expired_token, expired = api_token_create(user=owner, name="old",
                                              expires_at=timezone.now() + timedelta(days=7))
    ApiToken.objects.filter(pk=expired_token.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    assert api_status(client, lasting) == 200
    assert api_status(client, expired) == 401


def test_a_new_password_ends_every_token_of_the_user(client, owner, teammate):
    _, raw = api_token_create(user=owner, name="laptop")
    _, other = api_token_create(user=teammate, name="laptop")
    assert api_status(client, raw) == 200
    owner.set_password("a-new-pass-789")
    owner.save()
    assert api_status(client, raw) == 401
    assert api_status(client, other) == 200


def test_the_password_page_ends_tokens_too(client, owner):
    _, raw = api_token_create(user=owner, name="laptop")
    client.force_login(owner)
    response = client.post("/accounts/password_change/", {
        "old_password": "owner-pass-123", "new_password1": "Brand-new-pass-9081",
        "new_password2": "Brand-new-pass-9081"})
    assert response.status_code == 302
    client.logout()
    assert api_status(client, raw) == 401


def test_deactivation_ends_tokens(client, owner):
    _, raw = api_token_create(user=owner, name="laptop")
    owner.is_active = False
    owner.save()
    assert api_token_authenticate(raw=raw) is None
    assert api_status(client, raw) == 401


def test_reactivating_a_user_does_not_revive_their_old_tokens(client, owner, staff):
    _, old = api_token_create(user=owner, name="laptop")
    owner.is_active = False
    owner.save()
    # Reactivated in the admin, as staff do.
    client.force_login(staff)
    owner.is_active = True
    owner.save()
    client.logout()
    assert api_token_authenticate(raw=old) is None
    assert api_status(client, old) == 401
    token = ApiToken.objects.get(user=owner)
    from duels.selectors.api_tokens import api_token_state

    assert api_token_state(token=token).startswith("ended: the user was deactivated")
    _, new = api_token_create(user=owner, name="new laptop")
    assert api_status(client, new) == 200


def test_docs_pages_need_sign_in(client, owner):
    anonymous = client.get("/docs/security.md")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client.get("/glossary/").status_code == 200
    client.force_login(owner)
    assert client.get("/docs/security.md").status_code == 200


def test_scopes(owner):
    _, read = api_token_create(user=owner, name="reader")
    _, operate = api_token_create(user=owner, name="ops", scope=TokenScope.OPERATE)
    assert api_token_authenticate(raw=read) == owner
    assert api_token_authenticate(raw=read, scope=TokenScope.OPERATE) is None
    assert api_token_authenticate(raw=operate, scope=TokenScope.OPERATE) == owner
    with pytest.raises(ValueError, match="scope must be one of"):
        api_token_create(user=owner, name="odd", scope="admin")


def test_the_command_makes_scoped_expiring_tokens_and_lists_their_state(owner, capsys):
    call_command("api_token", "create", "owner", "scraper", "--scope", "operate", "--days", "30")
    captured = capsys.readouterr()
    assert "scope operate, until" in captured.err
    token = ApiToken.objects.get(name="scraper")
    assert token.scope == TokenScope.OPERATE
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    owner.set_password("changed-pass-321")
    owner.save()
    call_command("api_token", "list")
    assert "operate" in (listing := capsys.readouterr().out)
    assert "ended: the user's password changed" in listing
    with pytest.raises(CommandError, match="--days must be between 1 and 3650"):
        call_command("api_token", "create", "owner", "x", "--days", "0")
