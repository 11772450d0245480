"""Pages that mail a link exist only when mail is configured (issue 25)."""

from __future__ import annotations

import importlib

import pytest
from django.urls import clear_url_caches

import envduels_site.urls

pytestmark = pytest.mark.django_db
RESET_PAGES = ("/accounts/password_reset/", "/accounts/password_reset/done/",
               "/accounts/reset/done/", "/accounts/reset/MQ/set-password/")


@pytest.fixture
def urls_with_mail(settings):
    """Reload the URLs with EMAIL_HOST as each test sets it; restore them afterwards."""
    def mount(email_host: str) -> None:
        settings.EMAIL_HOST = email_host
        importlib.reload(envduels_site.urls)
        clear_url_caches()

    yield mount
    settings.EMAIL_HOST = ""
    importlib.reload(envduels_site.urls)
    clear_url_caches()


def test_without_mail_the_reset_pages_are_not_there(client, owner, urls_with_mail):
    urls_with_mail("")
    for page in RESET_PAGES:
        assert client.get(page).status_code == 404, page
    # Pages that need no mail stay.
    assert client.get("/accounts/login/").status_code == 200
    client.force_login(owner)
    assert client.get("/accounts/password_change/").status_code == 200


def test_with_mail_the_reset_page_sends_the_link(client, owner, urls_with_mail,
                                                  mailoutbox):
    urls_with_mail("smtp.example.org")
    owner.email = "owner@example.org"
    owner.save()
    assert client.get("/accounts/password_reset/").status_code == 200
    response = client.post("/accounts/password_reset/", {"email": "owner@example.org"})
    assert response.status_code == 302
    assert len(mailoutbox) == 1 and "/accounts/reset/" in mailoutbox[0].body
