"""Trainer-package downloads are bounded: a user may download ENVDUELS_PACKAGE_RATE_PER_MINUTE
a minute (then 429 with Retry-After), a process builds ENVDUELS_PACKAGE_BUILDS_AT_ONCE at once
(then 503), and a downloaded package's README names neither this installation's path nor its
commit."""

from __future__ import annotations

import io
import subprocess
import zipfile

import pytest

from duels.services.analytics import analytics_refresh
from duels.trainers.common import ROOT
from tests.duels.views.test_flywheel_page import planted

pytestmark = pytest.mark.django_db


@pytest.fixture
def set_ready(make):
    planted(make, collapse=False)
    analytics_refresh(resamples=10)


def test_downloads_per_user_are_limited_and_the_readme_keeps_the_server_private(
        set_ready, client, owner, settings):
    settings.ENVDUELS_PACKAGE_RATE_PER_MINUTE = 2
    client.force_login(owner)
    first = client.get("/flywheel/export/gymnasium/?size=3")
    assert first.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(first.streaming_content)))
    readme = archive.read(next(n for n in archive.namelist() if n.endswith("README.md")))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    text = readme.decode()
    assert str(ROOT) not in text and ROOT.as_uri() not in text
    assert not commit or commit not in text
    assert "pip install 'envduels @ <the path or URL" in text
    assert client.get("/flywheel/export/trl/?size=3").status_code == 200
    refused = client.get("/flywheel/export/gymnasium/?size=3")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "ENVDUELS_PACKAGE_RATE_PER_MINUTE" in refused.content.decode()


def test_one_package_is_built_at_a_time(set_ready, client, owner, settings):
    from duels.views import flywheel

    settings.ENVDUELS_PACKAGE_BUILDS_AT_ONCE = 1
    client.force_login(owner)
    builds = flywheel._builds()
    assert builds.acquire(blocking=False)  # another request is building one
    try:
        busy = client.get("/flywheel/export/gymnasium/?size=3")
    finally:
        builds.release()
    assert busy.status_code == 503 and "ENVDUELS_PACKAGE_BUILDS_AT_ONCE" in busy.content.decode()
    assert client.get("/flywheel/export/gymnasium/?size=3").status_code == 200
