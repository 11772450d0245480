"""The replay's tools in Chromium: the turn inspector, find in a 5,000-step transcript, the
timeline, and a live replay that keeps following live across a reload."""

from __future__ import annotations

import pytest

from duels.models import Status, Step
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

POSITION = "[data-role=position]"


class ReplayToolsBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("reader", "reader-pass-123")

    def wait_for_position(self, text: str):
        self.page.wait_for_function(
            "t => document.querySelector('[data-role=position]').textContent === t", arg=text
        )

    def open_inspector(self) -> str:
        self.page.locator("[data-role=step] details.step-call summary").click()
        section = self.page.locator("[data-role=step] section.call")
        section.wait_for()
        return section.locator(".call-message").first.inner_text()

    def test_inspector_shows_the_hint_only_in_the_hinted_run(self):
        hint = factories.hint(text="Count the dials from the left.")
        hinted = factories.episode(steps=3, hint=hint, environment=hint.environment)
        unhinted = factories.episode(steps=3, environment=hint.environment, solver=hinted.solver)
        self.page.goto(self.url(f"/episodes/{hinted.uuid}/#step-2"))
        self.wait_for_position("step 2 of 3")
        system = self.open_inspector()
        assert "Count the dials from the left." in system and "contains the hint" in system
        mark = self.page.locator("[data-role=step] mark.hint-text")
        assert mark.inner_text() == "Count the dials from the left."
        assert self.page.locator("[data-role=step] .call-message").count() == 4
        self.page.goto(self.url(f"/episodes/{unhinted.uuid}/#step-2"))
        self.wait_for_position("step 2 of 3")
        system = self.open_inspector()
        assert "Count the dials" not in system and "contains the hint" not in system
        assert self.page.locator("[data-role=step] mark.hint-text").count() == 0

    def test_find_reaches_a_step_far_out_of_view(self):
        episode = factories.episode(steps=5000, success=True)
        Step.objects.filter(episode=episode, index=4000).update(observation="a salt #4000 jar")
        Step.objects.filter(episode=episode, index=4500).update(reply="more SALT #4000")
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.wait_for_position("reset of 5,000")
        assert self.page.locator(".transcript-row[data-index='4000']").count() == 0
        self.page.keyboard.press("/")
        assert self.page.evaluate("document.activeElement.name") == "find"
        self.page.keyboard.type("salt #4000")
        self.page.keyboard.press("Enter")
        self.wait_for_position("step 4,000 of 5,000")
        status = self.page.locator("[data-role=find-status]")
        assert status.inner_text() == "match 1 of 2 (in 5,000 steps)"
        hit = self.page.locator("[data-role=step] mark.find-hit").first
        assert hit.inner_text() == "salt #4000"
        # The list redraws on the animation frame after the position changes.
        row = self.page.locator(".transcript-row.current[data-index='4000']")
        row.wait_for()
        assert self.page.locator(".transcript-row.current").count() == 1
        assert "row-match" in row.get_attribute("class")
        self.page.keyboard.press("Enter")
        self.wait_for_position("step 4,500 of 5,000")
        assert status.inner_text() == "match 2 of 2 (in 5,000 steps)"
        reply = self.page.locator("[data-role=step] details.step-reply")
        assert reply.get_attribute("open") is not None
        self.page.keyboard.press("Shift+Enter")
        self.wait_for_position("step 4,000 of 5,000")
        self.page.fill("[data-role=find] input", "no such text anywhere")
        self.page.keyboard.press("Enter")
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=find-status]').textContent"
            " === 'no match (in 5,000 steps)'")

    def test_find_as_you_type_says_which_match_of_how_many_in_how_many_steps(self):
        episode = factories.episode(steps=27, success=True)
        for index in (3, 8, 13, 21, 25):
            Step.objects.filter(episode=episode, index=index).update(
                observation=f"a brass lantern glows ({index})")
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-10"))
        self.wait_for_position("step 10 of 27")
        status = self.page.locator("[data-role=find-status]")
        self.page.keyboard.press("/")
        self.page.keyboard.type("lant")  # no Enter: the search runs as the person types
        self.wait_for_position("step 13 of 27")
        assert status.inner_text() == "match 3 of 5 (in 27 steps)"
        # Typing on: the old answer is not shown as if it were the new one.
        self.page.keyboard.type("ern q")
        assert status.inner_text() in ("searching…", "")
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=find-status]').textContent"
            " === 'no match (in 27 steps)'")
        for _ in range(2):
            self.page.keyboard.press("Backspace")
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=find-status]').textContent"
            " === 'match 3 of 5 (in 27 steps)'")
        self.page.keyboard.press("Enter")
        self.wait_for_position("step 21 of 27")
        assert status.inner_text() == "match 4 of 5 (in 27 steps)"

    def test_timeline_sums_and_click_opens_a_step(self):
        episode = factories.episode(steps=40, success=True)
        Step.objects.filter(episode=episode, index__gte=1).update(sandbox_ms=3, cost=0.001)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.wait_for_position("reset of 40")
        totals = self.page.locator("[data-role=timeline-totals]")
        assert totals.inner_text() == (
            "Sum over the reset and 40 steps: model latency 200 ms · sandbox time 120 ms · "
            "tokens 560 tokens · cost $0.04")
        box = self.page.locator("[data-role=timeline] canvas").bounding_box()
        self.page.mouse.click(box["x"] + box["width"] * (20.5 / 41), box["y"] + box["height"] / 2)
        self.wait_for_position("step 20 of 40")

    def test_a_live_replay_follows_live_after_a_reload(self):
        episode = factories.episode(steps=2, status=Status.RUNNING, success=None)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.wait_for_position("step 2 of 2")
        assert "#" not in self.page.url, "following live, the address names no step"
        self.page.reload()
        self.wait_for_position("step 2 of 2")
        assert self.page.is_checked("[data-control=follow]")
        Step.objects.create(episode=episode, index=3, action="3", observation="later")
        self.wait_for_position("step 3 of 3")
        # Paused on a step by the user: the address keeps it, and a reload stays there.
        self.page.keyboard.press("ArrowLeft")
        self.wait_for_position("step 2 of 3")
        assert self.page.url.endswith("#step-2")
        self.page.reload()
        self.wait_for_position("step 2 of 3")
        assert not self.page.is_checked("[data-control=follow]")
