"""Collected static files: content-hashed names in pages, compressed copies, long cache life."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

MANIFEST_STORAGES = {
    **settings.STORAGES,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}


@pytest.fixture
def collected(tmp_path):
    """collectstatic into a fresh directory with the site's storage (plotly left out: slow)."""
    root = tmp_path / "static"
    with override_settings(
        STATIC_ROOT=root,
        STORAGES=MANIFEST_STORAGES,
        STATICFILES_DIRS=[Path(settings.BASE_DIR) / "static"],
    ):
        call_command("collectstatic", interactive=False, verbosity=0)
        yield root


def test_site_storage_is_the_compressed_manifest():
    from envduels_site import settings as site_settings

    backend = site_settings.STORAGES["staticfiles"]["BACKEND"]
    assert backend == "whitenoise.storage.CompressedManifestStaticFilesStorage"


@pytest.mark.slow
@pytest.mark.django_db
def test_pages_name_hashed_files_served_compressed_for_a_decade(collected, owner):
    hashed = sorted(path.name for path in (collected / "js").glob("replay.*"))
    assert any(name.endswith(".js.gz") for name in hashed)
    assert any(name.endswith(".js.br") for name in hashed)
    client = Client()
    client.force_login(owner)
    page = client.get("/players/").content.decode()
    start = page.index("/static/css/app.")
    css_url = page[start : page.index('"', start)]
    assert css_url != "/static/css/app.css" and len(css_url.split(".")) == 3
    response = client.get(css_url, headers={"accept-encoding": "gzip, br"})
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] == "br"
    assert "max-age=315360000" in response.headers["Cache-Control"]
    assert "immutable" in response.headers["Cache-Control"]
    body = b"".join(response.streaming_content)
    assert len(body) < (collected / "css" / "app.css").stat().st_size / 2


@pytest.mark.django_db
def test_plotly_is_not_sent_with_pages_without_charts(owner, client):
    client.force_login(owner)
    for path in ("/", "/players/", "/duels/", "/environments/", "/tournaments/", "/annotate/"):
        assert b"plotly" not in client.get(path).content, path
