"""Repeated failed sign-ins are throttled per account and per address, with a clear message."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from duels.models import SignInFailure

pytestmark = pytest.mark.django_db

LIMIT = 5  # ENVDUELS_SIGNIN_FAILURES default


def sign_in(username: str, password: str, *, address: str = "10.0.0.1", url="/accounts/login/"):
    client = Client(REMOTE_ADDR=address)
    return client.post(url, {"username": username, "password": password})


def signed_in(response) -> bool:
    return response.status_code == 302


def test_an_account_is_throttled_after_repeated_failures(owner, teammate):
    for _ in range(LIMIT):
        failed = sign_in("owner", "wrong-guess")
        assert failed.status_code == 200 and "Please enter a correct username" in failed.text
    refused = sign_in("owner", "owner-pass-123")
    assert not signed_in(refused)
    assert "Too many failed sign-ins for this account" in refused.text
    assert re.search(r"Try again in about 1[45] minutes, at \d\d:\d\d UTC", refused.text)
    # From another address too: the limit is per account.
    assert not signed_in(sign_in("owner", "owner-pass-123", address="10.9.9.9"))
    # Another account is not affected.
    assert signed_in(sign_in("teammate", "teammate-pass-123"))


def test_an_address_is_throttled_whatever_usernames_it_tries(teammate):
    for number in range(LIMIT * 4):
        assert not signed_in(sign_in(f"guess-{number}", "x", address="10.6.6.6"))
    refused = sign_in("teammate", "teammate-pass-123", address="10.6.6.6")
    assert "Too many failed sign-ins from your address" in refused.text
    assert signed_in(sign_in("teammate", "teammate-pass-123", address="10.0.0.2"))


def test_a_success_clears_the_accounts_failures(owner):
    for _ in range(LIMIT - 1):
        sign_in("owner", "wrong-guess")
    assert signed_in(sign_in("owner", "owner-pass-123"))
    assert not SignInFailure.objects.filter(username="owner").exists()
    sign_in("owner", "wrong-guess")
    assert signed_in(sign_in("owner", "owner-pass-123"))


def test_usernames_are_counted_whatever_their_case(owner):
    for name in ("owner", "OWNER", "Owner", "oWner", "owneR"):
        sign_in(name, "wrong-guess")
    assert "Too many failed sign-ins" in sign_in("owner", "owner-pass-123").text


def test_the_admin_sign_in_is_throttled_too(staff):
    for _ in range(LIMIT):
        sign_in("staffer", "wrong-guess", url="/admin/login/")
    refused = sign_in("staffer", "staff-pass-123", url="/admin/login/")
    assert refused.status_code == 200
    assert "Too many failed sign-ins for this account" in refused.text


def test_behind_a_trusted_proxy_the_address_is_the_one_the_proxy_saw(settings, teammate):
    settings.ENVDUELS_TRUSTED_PROXIES = ["10.0.0.0/24"]
    for number in range(LIMIT * 4):
        Client(REMOTE_ADDR="10.0.0.100", HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7").post(
            "/accounts/login/", {"username": f"guess-{number}", "password": "x"},
            secure=True,
        )
    assert SignInFailure.objects.filter(address="203.0.113.7").count() == LIMIT * 4
    # Another client behind the same proxy still signs in.
    other = Client(REMOTE_ADDR="10.0.0.100", HTTP_X_FORWARDED_FOR="198.51.100.9").post(
        "/accounts/login/", {"username": "teammate", "password": "teammate-pass-123"},
        secure=True,
    )
    assert signed_in(other)
