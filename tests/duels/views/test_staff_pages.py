"""Staff pages refuse others with the app's own 403 page, an expected refusal logs one line and
no traceback, and /favicon.ico is the site's icon."""

from __future__ import annotations

import logging

import pytest

pytestmark = pytest.mark.django_db

STAFF_PAGES = ["/import/", "/workers/"]


@pytest.mark.parametrize("path", STAFF_PAGES)
def test_a_signed_in_user_who_is_not_staff_gets_the_app_s_403_page(client, teammate, path):
    client.force_login(teammate)
    response = client.get(path)
    assert response.status_code == 403
    page = response.content.decode()
    assert "Only staff may open this page." in page
    assert "Back to the dashboard" in page
    assert "/admin/login/" not in response.get("Location", "")
    assert 'id="id_username"' not in page  # not the admin's sign-in form


@pytest.mark.parametrize("path", STAFF_PAGES)
def test_visitors_are_sent_to_the_site_s_sign_in_and_staff_get_the_page(client, staff, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    client.force_login(staff)
    assert client.get(path).status_code == 200


@pytest.mark.parametrize("path", [*STAFF_PAGES, "/annotate/queues/new/"])
def test_an_expected_403_logs_its_line_without_a_traceback(client, teammate, caplog, path):
    client.force_login(teammate)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get(path).status_code == 403
    refusals = [record for record in caplog.records if record.name == "django.request"]
    assert [record.getMessage() for record in refusals] == [
        f"Forbidden (Permission denied): {path}"]
    assert refusals[0].exc_info is None and "Traceback" not in caplog.text


def test_favicon_ico_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg")
    assert "max-age=86400" in response["Cache-Control"]
