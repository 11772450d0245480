"""Whose address a request has (issue 25): X-Forwarded-For counts only from a trusted proxy and
only its own entry; whatever does not parse is unknown - on SQLite and on PostgreSQL."""

from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from duels.management.commands.serve import daphne_argv
from duels.models import SignInFailure
from tests.helpers.postgres import fresh_postgres_database, postgres_shell

LIMIT = 5  # ENVDUELS_SIGNIN_FAILURES default; an address may fail four times as often
HOSTILE = "not-an-ip<script>"


def sign_in(address: str, forwarded: str | None = None, *, username: str = "guess",
            fresh: bool = True) -> tuple:
    """One failed sign-in (after forgetting earlier failures when `fresh`); (status, throttled
    for the address?, the address stored)."""
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    if fresh:
        SignInFailure.objects.all().delete()
    response = Client(REMOTE_ADDR=address, **headers).post(
        "/accounts/login/", {"username": username, "password": "wrong"})
    latest = SignInFailure.objects.order_by("-pk").first()
    return (response.status_code, "from your address" in response.text,
            latest.address if latest else None)


def forwarded_for_outcomes() -> dict:
    """Forged and unparsable X-Forwarded-For, without and behind a trusted proxy."""
    outcomes: dict = {}
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
                           ENVDUELS_TRUSTED_PROXIES=[]):
        # No trusted proxy: a new forged address per attempt changes nothing.
        for number in range(LIMIT * 4):
            sign_in("10.0.0.1", f"10.9.9.{number}", username=f"guess-{number}",
                    fresh=number == 0)
        outcomes["forged"] = sign_in("10.0.0.1", "10.9.9.200", username="someone", fresh=False)
        outcomes["forged stored"] = sorted(
            set(SignInFailure.objects.values_list("address", flat=True)))
        outcomes["unparsable, untrusted"] = sign_in("10.0.0.2", HOSTILE)
        outcomes["unparsable peer"] = sign_in("unix:/run/daphne.sock")
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
                           ENVDUELS_TRUSTED_PROXIES=["10.0.0.0/24"]):
        outcomes["unparsable, trusted"] = sign_in("10.0.0.5", HOSTILE)
        outcomes["proxy's own entry"] = sign_in("10.0.0.5", f"{HOSTILE}, 203.0.113.7")
        outcomes["proxy's entry unparsable"] = sign_in("10.0.0.5", f"203.0.113.7, {HOSTILE}")
        outcomes["peer not a proxy"] = sign_in("192.0.2.9", "203.0.113.7")
    SignInFailure.objects.all().delete()
    return {name: list(value) for name, value in outcomes.items()}


EXPECTED = {
    "forged": [200, True, "10.0.0.1"],  # throttled: the address is the peer's, not the header's
    "forged stored": ["10.0.0.1"],
    "unparsable, untrusted": [200, False, "10.0.0.2"],
    "unparsable peer": [200, False, None],
    "unparsable, trusted": [200, False, None],
    "proxy's own entry": [200, False, "203.0.113.7"],
    "proxy's entry unparsable": [200, False, None],
    "peer not a proxy": [200, False, "192.0.2.9"],
}


@pytest.mark.django_db
def test_forged_and_unparsable_forwarded_for_on_sqlite():
    assert forwarded_for_outcomes() == EXPECTED


@pytest.mark.postgres
@pytest.mark.slow
def test_forged_and_unparsable_forwarded_for_on_postgresql():
    with fresh_postgres_database(migrated=True) as url:
        printed = postgres_shell(url, (
            "import json\n"
            "from tests.envduels_site.test_client_address import forwarded_for_outcomes\n"
            "print(json.dumps(forwarded_for_outcomes()))\n"))
    assert json.loads(printed.strip().splitlines()[-1]) == EXPECTED


def test_serve_never_lets_daphne_trust_proxy_headers():
    argv = daphne_argv(host="127.0.0.1", port=8000)
    assert argv[-1] == "envduels_site.asgi:application"
    assert not any(part.startswith("--proxy") for part in argv)
