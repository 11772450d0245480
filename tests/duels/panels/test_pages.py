"""The panel pages show each panel's manifest hash, its versions (an invalid one with the reason)
and the outside outcomes imported on it, marked as having no transcript."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from duels.models import OutcomeStatus, OutsideOutcome
from duels.panels.create import panel_from_designs

pytestmark = pytest.mark.django_db


def test_panel_pages_show_the_hash_versions_and_imported_outcomes(client, owner, make):
    valid = make.environment(benchmark_seeds=[1, 2], title="<b>bold</b>")
    make.hint(environment=valid)
    invalid = make.environment(benchmark_seeds=[1, 2], status="valid")
    panel, _ = panel_from_designs(hashes=[valid.content_hash, invalid.content_hash],
                                  name="two <i>designs</i>")
    invalid.status = "invalid"
    invalid.validation = {"valid": False, "checks": [{
        "name": "deterministic", "passed": False,
        "detail": "line 3: time.time() reads the clock"}]}
    invalid.save()
    entries = list(panel.entries.order_by("position"))
    for trial, (hinted, status) in enumerate(
            ((False, "success"), (True, "failure"), (True, "incomplete"))):
        OutsideOutcome.objects.create(panel=panel, entry=entries[0], model="gpt-x",
                                      hinted=hinted, seed=1, status=status, trial=trial)
    assert client.get("/panels/").status_code == 302  # sign-in first
    client.force_login(owner)
    listing = client.get("/panels/").content.decode()
    assert panel.short_hash in listing and "two &lt;i&gt;designs&lt;/i&gt;" in listing
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/panels/{panel.uuid}/").content.decode()
    assert panel.manifest_sha256 in page and entries[0].entry_id in page
    assert "<title>Panel two &lt;i&gt;designs&lt;/i&gt; · EnvDuels</title>" in page
    assert page.count('id="panel-ranking"') == 1 and page.count('id="evaluations"') == 1
    assert "time.time() reads the clock" in page and "<b>bold</b>" not in page
    assert "imported outcomes, no transcript" in page
    assert OutsideOutcome.objects.filter(status=OutcomeStatus.INCOMPLETE).count() == 1
    assert "1 / 1" in page and "0 / 1" in page  # incomplete kept apart, not decided
    assert len(queries) < 15
