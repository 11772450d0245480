"""A study slot's note and error, and the study's own error, reach a reader only through the one
rule for error text (duels/words/error_text.py): staff read them whole; a viewer and a published
study site never see a player's server address or what that server answered."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from duels.models import Status, StudySlot
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db

ADDRESS = "http://127.0.0.1:9/v1"
SLOT_ERROR = (f"PlayerError: could not connect to {ADDRESS}: [Errno 111] Connection refused "
              "by gpu-7.internal")
SLOT_NOTE = f"authoring gave up: HTTP 401 from {ADDRESS}: invalid key sk-live-123 for team-a"


@pytest.fixture
def troubled_study():
    study = played_study()
    slots = list(StudySlot.objects.filter(study=study).order_by("position"))
    # One slot failed with a note; another is still retrying after an error.
    StudySlot.objects.filter(pk=slots[0].pk).update(status=Status.FAILED, note=SLOT_NOTE)
    StudySlot.objects.filter(pk=slots[1].pk).update(status=Status.RUNNING, note="",
                                                    error=SLOT_ERROR)
    type(study).objects.filter(pk=study.pk).update(error=f"stopped: {SLOT_ERROR}")
    return study


def _assert_hidden(page: str) -> None:
    assert "127.0.0.1" not in page and "gpu-7.internal" not in page
    assert "sk-live-123" not in page and "Connection refused" not in page
    assert "[server]" in page and "[its reply: staff only]" in page


def test_a_viewer_reads_slot_errors_without_server_addresses(client, teammate, troubled_study):
    client.force_login(teammate)
    page = client.get(f"/studies/{troubled_study.uuid}/").content.decode()
    _assert_hidden(page)
    assert "authoring gave up: HTTP 401 from [server]" in page
    assert "retrying after: PlayerError: could not connect to [server]" in page


def test_staff_read_slot_errors_whole(client, staff, troubled_study):
    client.force_login(staff)
    page = client.get(f"/studies/{troubled_study.uuid}/").content.decode()
    assert ADDRESS in page and "sk-live-123" in page


def test_the_published_study_site_hides_server_addresses(tmp_path, troubled_study):
    out = tmp_path / "site"
    call_command("export", "--format", "site", "--study", str(troubled_study.uuid), "--out",
                 str(out), stderr=StringIO())
    page = (out / "studies" / f"{troubled_study.uuid}.html").read_text()
    _assert_hidden(page)
    assert "Slots and their versions" in page
