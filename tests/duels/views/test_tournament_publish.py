"""The tournament page's "Download as a static site": staff only, a zip of the published copy,
its boxes leave parts out, and a tournament too large for a request says which command to run."""

from __future__ import annotations

import io
import zipfile

import pytest

from duels.publishing import archive

pytestmark = pytest.mark.django_db


@pytest.fixture
def tournament(make):
    tournament = make.tournament(name="Spring")
    make.finished_duel(tournament=tournament)
    return tournament


def test_staff_see_the_button_and_download_a_zip(client, staff, tournament):
    client.force_login(staff)
    page = client.get(f"/tournaments/{tournament.uuid}/").content.decode()
    assert "Download as a static site" in page
    response = client.post(f"/tournaments/{tournament.uuid}/site.zip", {"no_costs": "on"})
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")
    data = b"".join(response.streaming_content)
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    root = f"envduels-site-{str(tournament.uuid)[:8]}"
    assert f"{root}/index.html" in names
    assert sum(name.startswith(f"{root}/episodes/") and name.endswith(".html")
               for name in names) == 8
    duel_page = next(name for name in names
                     if name.startswith(f"{root}/duels/") and name.endswith(".html"))
    assert "withheld" in zipfile.ZipFile(io.BytesIO(data)).read(duel_page).decode()


def test_others_get_no_button_and_no_site(client, owner, tournament):
    client.force_login(owner)
    page = client.get(f"/tournaments/{tournament.uuid}/").content.decode()
    assert "Download as a static site" not in page
    assert client.post(f"/tournaments/{tournament.uuid}/site.zip").status_code == 403
    client.logout()
    response = client.post(f"/tournaments/{tournament.uuid}/site.zip")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_large_tournament_names_the_command(client, staff, tournament, monkeypatch):
    monkeypatch.setattr(archive, "SITE_DOWNLOAD_MAX_EPISODES", 4)
    client.force_login(staff)
    response = client.post(f"/tournaments/{tournament.uuid}/site.zip")
    assert response.status_code == 400
    text = response.content.decode()
    assert "8 episodes, more than the 4" in text
    assert f"manage.py export --format site --tournament {tournament.uuid}" in text
