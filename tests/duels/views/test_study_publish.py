"""A study's "Download as a static site" (staff): the zip holds the study's own pages with
relative links, as the tournament's does; others see no button and get 403."""

from __future__ import annotations

import io
import zipfile

import pytest

from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def test_staff_download_a_study_as_a_static_site(client, staff, owner):
    study = played_study()
    page_url, site_url = f"/studies/{study.uuid}/", f"/studies/{study.uuid}/site.zip"
    client.force_login(owner)
    assert 'id="study-publish"' not in client.get(page_url).content.decode()
    assert client.post(site_url).status_code == 403
    client.force_login(staff)
    page = client.get(page_url).content.decode()
    assert 'id="study-publish"' in page and f'action="{site_url}"' in page
    response = client.post(site_url)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment; filename=\"envduels-study-")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        names = archive.namelist()
        study_page = next(name for name in names
                          if name.endswith(f"studies/{study.uuid}.html"))
        html = archive.read(study_page).decode()
    assert study.name in html and 'href="/' not in html
