"""Export and import are reachable from the navigation; the export page links every download."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_export_page_links_every_download(owner_client):
    page = owner_client.get("/duels/").content.decode()
    assert 'href="/export/"' in page and 'href="/import/"' not in page  # import is staff-only
    export = owner_client.get("/export/").content.decode()
    for url in ("/export/duels.jsonl", "/export/environments.jsonl",
                "/export/training/environments.jsonl", "/export/training/chat.jsonl"):
        assert f'href="{url}"' in export
        response = owner_client.get(url)
        assert response.status_code == 200 and response["Content-Disposition"].startswith(
            "attachment"
        )


def test_staff_see_import_in_the_navigation(client, staff):
    client.force_login(staff)
    page = client.get("/export/").content.decode()
    assert 'href="/import/"' in page


def test_export_page_needs_sign_in(client):
    response = client.get("/export/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
