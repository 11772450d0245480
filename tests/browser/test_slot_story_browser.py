"""A slot's story in Chromium: from a built-in study's author × solver matrix to one slot's
story, which shows the authoring reply, the validation verdict, the digest the author read, its
hardening reply and the source diff between its versions; the page stays usable at 390 px and
passes axe-core."""

from __future__ import annotations

import pytest

from duels.models import Environment, ModelCall
from duels.studies.results import study_figures_refresh
from sandbox_runner import available_backends
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need
from tests.helpers.studies import builtin_players, study_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class SlotStoryBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("scientist", "scientist-pass-123")

    def _study(self):
        backends = available_backends()
        need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
        with self.settings(ENVDUELS_SANDBOX="bwrap" if "bwrap" in backends else backends[0],
                           ENVDUELS_BUILTIN_LATENCY_MS=0, ENVDUELS_INFRA_BACKOFF_SECONDS=0):
            study = study_run(players=builtin_players(("builtin-rookie", "builtin-architect",
                                                       "builtin-ace")),
                              seeds=2, harden_rounds=1, domains=("maze",))
        study_figures_refresh(study=study, resamples=20)
        return study

    def test_a_slot_story_from_the_matrix_tells_the_setters_work(self):
        study = self._study()
        first, revised = Environment.objects.filter(
            study=study, author__name="builtin-architect").order_by("revision")
        answer = ModelCall.objects.get(study=study, environment=first).reply
        hardening = ModelCall.objects.get(study=study, environment=revised).reply
        self.page.goto(self.url(f"/studies/{study.uuid}/"))
        self.page.click("#study-matrix a[data-story='builtin-architect/env_001']")
        self.page.wait_for_selector("h1 >> text=The story of builtin-architect/env_001")
        first_part, revision = self.page.locator("#version-0"), self.page.locator("#version-1")
        # The authoring reply and the hardening reply, as the model wrote them.
        assert answer.strip().splitlines()[0] in first_part.locator(".story-reply").inner_text()
        assert hardening.strip().splitlines()[0] in revision.locator(".story-reply").inner_text()
        assert first_part.locator(".story-verdict").inner_text().startswith("valid")
        digest = revision.locator(".story-digest").inner_text()
        assert "Version: env_001" in digest and "Pass rate without hint" in digest
        diff = revision.locator("[data-diff='source']")
        assert diff.locator(".diff-add").count() + diff.locator(".diff-del").count() > 0
        # The field's play of each version opens its plays.
        link = revision.locator(".story-pairs a[data-plays]").first
        plays = int(link.get_attribute("data-plays"))
        link.click()
        self.page.wait_for_selector("#episode-rows")
        assert self.page.locator("#episode-rows tbody tr").count() == plays

    def test_the_story_is_usable_at_390_px(self):
        study = self._study()
        self.page.set_viewport_size({"width": 390, "height": 844})
        self.page.goto(self.url(f"/studies/{study.uuid}/slots/builtin-ace/env_001/"))
        self.page.wait_for_selector("#version-1")
        overflow = self.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1
        # And it passes axe-core with no serious or critical violation.
        from axe_playwright_python.sync_playwright import Axe

        found = [f"{violation['id']}: {[node['target'] for node in violation['nodes']][:3]}"
                 for violation in Axe().run(self.page).response["violations"]
                 if violation.get("impact") in {"serious", "critical"}]
        assert found == []
