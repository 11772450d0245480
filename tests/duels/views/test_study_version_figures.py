"""A study version's environment page: each pass rate at the top is the counts printed beside
it, so the top and the table below agree, also for a version whose plays are not all done."""

from __future__ import annotations

import re

import pytest

from duels.models import Environment, Episode, Status
from duels.studies.results import study_figures_refresh
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


def test_every_version_page_shows_the_rate_of_its_own_counts(owner_client):
    study = played_study()
    # One version with only part of its plays done: its hinted plays are still pending.
    partial = Environment.objects.filter(study=study, revision=1).first()
    Episode.objects.filter(environment=partial, condition="hinted").update(
        status=Status.PENDING, success=None)
    study_figures_refresh(study=study, resamples=20)
    checked = 0
    for environment in Environment.objects.filter(study=study):
        page = owner_client.get(f"/environments/{environment.uuid}/").content.decode()
        top = page.split('id="study-version"')[1].split("</section>")[0]
        for label in ("Unhinted", "Hinted"):
            shown, passed, attempted = re.search(
                label + r'</a> <strong class="num">([^<]*)</strong> '
                r'<span class="small muted">(\d+)/(\d+)</span>', top).groups()
            expected = (f"{int(passed) / int(attempted) * 100:.0f}%" if int(attempted)
                        else "—")
            assert shown == expected, (environment.version, label, shown, passed, attempted)
            checked += 1
    assert checked == 2 * Environment.objects.filter(study=study).count()
