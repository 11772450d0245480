"""Compare in Chromium: per-step reward and done, only the differing words of actions marked,
a link back to the duel, keys that move through the steps and open the replay at the same
step (and back), and /compare/ without parameters explaining what to pick."""

from __future__ import annotations

import pytest

from duels.models import Step
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class CompareBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("comparer", "comparer-pass-123")

    def test_compare_marks_only_differences_and_syncs_with_the_replay(self):
        duel = factories.finished_duel(attempts=1, unhinted_a=(False,), hinted_a=(True,),
                                       unhinted_b=(False,), hinted_b=(False,))
        unhinted = duel.episodes.get(environment=duel.env_a, condition="unhinted")
        hinted = duel.episodes.get(environment=duel.env_a, condition="hinted")
        for episode in (unhinted, hinted):
            Step.objects.filter(episode=episode).delete()
            factories.step_rows(episode, count=3)
        Step.objects.filter(episode=unhinted, index=2).update(action="open the red door")
        Step.objects.filter(episode=hinted, index=2).update(action="open the blue door",
                                                           reward=0.5)
        self.page.goto(self.url(f"/episodes/{unhinted.uuid}/compare/"))
        row = self.page.locator("#compare-table tr[data-index='2']")
        assert row.locator("mark").all_inner_texts() == ["red", "blue"]
        assert "reward 0.50" in row.inner_text() and "not done" in row.inner_text()
        last = self.page.locator("#compare-table tr[data-index='3']")
        assert "done" in last.inner_text() and "passed" in last.inner_text()
        self.page.click("text=back to the duel >> nth=0")
        self.page.wait_for_url(f"**/duels/{duel.uuid}/")
        self.page.go_back()
        # Keys move through the steps; Enter opens the current one in the replay.
        self.page.locator("h1").click()
        for _ in range(3):
            self.page.keyboard.press("j")
        self.page.keyboard.press("k")
        assert self.page.locator("#compare-table tr.current").get_attribute("data-index") == "1"
        assert self.page.url.endswith("#row-1")
        self.page.keyboard.press("Enter")
        self.page.wait_for_url(f"**/episodes/{unhinted.uuid}/#step-1")
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=position]').textContent === 'step 1 of 3'"
        )
        self.page.keyboard.press("ArrowRight")
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=position]').textContent === 'step 2 of 3'"
        )
        self.page.click("[data-compare-link]")
        self.page.wait_for_url("**/compare/#row-2")
        assert self.page.locator("#compare-table tr.current").get_attribute("data-index") == "2"

    def test_compare_without_parameters_explains_what_to_pick(self):
        duel = factories.finished_duel(attempts=1, unhinted_a=(False,), hinted_a=(True,),
                                       unhinted_b=(True,), hinted_b=(True,))
        response = self.page.goto(self.url("/compare/"))
        assert response.status == 200
        assert "Compare two runs" in self.page.inner_text("h1")
        links = self.page.locator("main table a:has-text('compare')")
        assert links.count() == 2  # one pair per side of the duel
        links.first.click()
        self.page.wait_for_url("**/compare/?a=*&b=*")
        assert self.page.locator("#compare-table").is_visible()
        self.page.goto(self.url(f"/compare/?a={duel.episodes.first().uuid}"))
        assert "the second (b) is missing" in self.page.inner_text("[role=alert]")
