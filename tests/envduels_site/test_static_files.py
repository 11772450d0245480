"""Collected static files: content-hashed names in pages, compressed copies, long cache life."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

MANIFEST_STORAGES = {
    **settings.STORAGES,
    "staticfiles": {"BACKEND": "envduels_site.storage.StaticFilesStorage"},
}


@pytest.fixture
def collected(tmp_path):
    """collectstatic into a fresh directory with the site's storage: the site's own css and js.

    Compressing every file twice (gzip, brotli) is what takes the time: the apps' files (the
    admin's 127, django_htmx's 39) and the vendored plotly bundle (1.5 MB) would make it tens of
    seconds on a loaded machine and show nothing the site's own files do not."""
    root = tmp_path / "static"
    with override_settings(
        STATIC_ROOT=root,
        STORAGES=MANIFEST_STORAGES,
        STATICFILES_DIRS=[Path(settings.BASE_DIR) / "static"],
        STATICFILES_FINDERS=["django.contrib.staticfiles.finders.FileSystemFinder"],
    ):
        call_command("collectstatic", interactive=False, verbosity=0, ignore_patterns=["vendor"])
        yield root


def test_site_storage_is_the_compressed_manifest():
    from envduels_site import settings as site_settings

    backend = site_settings.STORAGES["staticfiles"]["BACKEND"]
    assert backend == "envduels_site.storage.StaticFilesStorage"


UNCOLLECTED_PROBE = """
import re
import django
django.setup()
from django.test import Client
client = Client(HTTP_HOST="localhost")
page = client.get("/accounts/login/")
print(page.status_code)
for url in re.findall(r'(?:href|src)="(/static/[^"?]+)', page.content.decode()):
    asset = client.get(url)
    print(url, asset.status_code, asset.headers.get("Cache-Control", ""))
"""


def test_a_web_process_without_collectstatic_serves_pages_and_plain_static_files(tmp_path):
    """The site's own storage (not the plain one tests/conftest.py swaps in), with nothing
    collected: the way a web machine runs after `migrate` and Daphne only."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "envduels_site.settings",
           "ENVDUELS_VAR_DIR": str(tmp_path / "var")}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", UNCOLLECTED_PROBE], env=env, text=True,
                          cwd=Path(settings.BASE_DIR), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split("\n")
    assert lines[0] == "200", done.stdout + done.stderr[-2000:]
    assets = [line.split(" ", 2) for line in lines[1:] if line]
    assert any(url == "/static/favicon.svg" for url, _, _ in assets), assets
    assert any(re.fullmatch(r"/static/css/app\.css", url) for url, _, _ in assets), assets
    for url, status, cache in assets:
        assert status == "200", url
        assert "immutable" not in cache, url  # plain names may change: a short lifetime
    assert not list((tmp_path / "var" / "staticfiles").iterdir())


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
