"""A study page in Chromium: its progress card follows the study live, and once newer figures
are stored the page reloads by itself to show them."""

from __future__ import annotations

import pytest

from duels.models import Status, Study
from duels.studies.results import study_figures_refresh
from tests.helpers.browser import BrowserTestCase
from tests.helpers.study_data import played_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class StudyBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("scientist", "scientist-pass-123")

    def test_the_page_follows_the_study_and_shows_its_figures_when_stored(self):
        study = played_study()
        Study.objects.filter(pk=study.pk).update(status=Status.RUNNING, slots_done=1,
                                                 episodes_done=20)
        self.page.goto(self.url(f"/studies/{study.uuid}/"))
        assert "1 / 3 slots done" in self.page.inner_text("#study-progress")
        assert "The rankings appear once final versions" in self.page.inner_text(
            "#study-rankings")
        Study.objects.filter(pk=study.pk).update(slots_done=3, episodes_done=72)
        self.page.wait_for_selector("#study-progress >> text=3 / 3 slots done", timeout=20_000)
        # The figures are stored (as the background task does): the page reloads with them.
        Study.objects.filter(pk=study.pk).update(status=Status.FINISHED)
        study_figures_refresh(study=study, resamples=20)
        self.page.wait_for_selector("#study-rankings table", timeout=20_000)
        assert "alpha" in self.page.inner_text("#study-matrix")
        assert self.page.locator(
            "#study-rankings a.metric[href='/glossary/#canonical_autonomous_solve']").count() == 1
