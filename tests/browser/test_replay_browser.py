"""The replay page lists the whole transcript, live: rows grow as steps stream in, the header
counters follow, the current step is highlighted and kept in view, each row carries its
permalink and note link, a bad #step-N says so, and the end banner tells a pass, a normal loss
and a real error apart. Live Daphne server, Playwright, Chromium."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import close_old_connections

from duels.models import EndReason, Episode, Status, Step
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROW = "[data-role=transcript] .transcript-row"


class ReplayBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("watcher", "watcher-pass-123")

    def wait_for_position(self, text: str):
        self.page.wait_for_function(
            "t => document.querySelector('[data-role=position]').textContent === t", arg=text
        )

    def current_row(self, index: int):
        """The highlighted row, step `index` and no other, once the list has drawn it (the list
        redraws on the animation frame after the position changes)."""
        row = self.page.locator(f"{ROW}.current[data-index='{index}']")
        row.wait_for()
        assert self.page.locator(f"{ROW}.current").count() == 1
        return row

    def rows(self) -> list[str]:
        return self.page.locator(ROW).evaluate_all("rows => rows.map(r => r.dataset.index)")

    def test_live_transcript_grows_and_header_counters_follow(self):
        episode = factories.episode(steps=2, status=Status.RUNNING, success=None)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.wait_for_position("step 2 of 2")
        assert self.rows() == ["0", "1", "2"]
        assert self.page.inner_text("[data-live=steps]") == "2 steps"

        def write_steps():
            for index in range(3, 7):
                Step.objects.create(
                    episode=episode, index=index, action=f"move {index}",
                    observation=f"room {index}", input_tokens=100, output_tokens=7,
                )
                time.sleep(0.3)
            close_old_connections()

        writer = threading.Thread(target=write_steps)
        writer.start()
        # Seen mid-stream: more rows than at load, fewer than at the end, counters matching.
        self.page.wait_for_function(
            """() => {
                const rows = document.querySelectorAll('.transcript-row').length;
                const steps = document.querySelector('[data-live=steps]').textContent;
                return rows > 3 && rows < 7 && steps === `${rows - 1} steps`;
            }"""
        )
        writer.join()
        self.wait_for_position("step 6 of 6")
        assert self.rows() == ["0", "1", "2", "3", "4", "5", "6"]
        assert self.page.inner_text("[data-live=steps]") == "6 steps"
        # 2 factory steps with 10 tokens in, 4 new ones with 100.
        assert self.page.inner_text("[data-live=input_tokens]") == "420"
        current = self.current_row(6)
        assert "move 6" in current.inner_text() and "room 6" in current.inner_text()
        # The end comes live too: a step-limit loss is a normal loss, not an error.
        Episode.objects.filter(pk=episode.pk).update(
            status=Status.FINISHED, success=False, end_reason=EndReason.MAX_STEPS, steps=6,
            input_tokens=420, output_tokens=36, cost=0.0123,
        )
        banner = self.page.locator("#episode-end")
        banner.wait_for()
        assert "step limit reached" in banner.inner_text()
        assert "end-lost" in banner.get_attribute("class")
        assert self.page.inner_text("[data-live=cost]") == "$0.01"
        assert self.page.inner_text("[data-role=live]") == "episode finished"

    def test_long_transcript_is_virtualised_and_keeps_the_current_step_in_view(self):
        episode = factories.episode(steps=3000, success=True)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-1500"))
        self.wait_for_position("step 1,500 of 3,000")
        rendered = self.page.locator(ROW).count()
        assert 0 < rendered < 100, f"{rendered} rows in the DOM for 3,001 steps"
        assert self.in_view(self.current_row(1500))
        self.page.keyboard.press("End")
        self.wait_for_position("step 3,000 of 3,000")
        row = self.current_row(3000)
        assert self.in_view(row)
        assert "passed" in row.inner_text()
        # The scrubber drives the highlight too.
        self.page.locator("[data-control=scrub]").fill("10")
        self.wait_for_position("step 10 of 3,000")
        assert self.in_view(self.current_row(10))
        assert self.page.url.endswith("#step-10")
        # Clicking a row opens that step.
        self.page.locator(f"{ROW}[data-index='12'] .row-text").click()
        self.wait_for_position("step 12 of 3,000")
        reply = self.page.locator("[data-role=step] details.step-reply pre")
        assert "ACTION: 12" in reply.text_content()
        assert self.page.locator("#live-reply").count() == 1

    def in_view(self, row) -> bool:
        return row.evaluate(
            """row => {
                const list = row.closest('[data-role=transcript]').getBoundingClientRect();
                const box = row.getBoundingClientRect();
                return box.top >= list.top - 1 && box.bottom <= list.bottom + 1;
            }"""
        )

    def test_each_row_links_its_step_and_its_note(self):
        episode = factories.episode(steps=4, success=True)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.wait_for_position("reset of 4")
        row = self.page.locator(f"{ROW}[data-index='3']")
        assert row.locator("a.row-index").get_attribute("href") == "#step-3"
        row.locator("a.row-note").click()
        self.page.wait_for_url(f"**/episodes/{episode.uuid}/annotations/?step=3")
        assert "step 3" in self.page.inner_text("h2")
        self.page.go_back()
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-2"))
        self.page.reload()
        self.wait_for_position("step 2 of 4")

    def test_a_bad_step_link_says_so(self):
        episode = factories.episode(steps=4, success=True)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-40"))
        error = self.page.locator("[data-role=hash-error]")
        error.wait_for()
        assert error.inner_text() == "There is no step 40: this episode has steps 0–4."
        self.wait_for_position("reset of 4")
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-two"))
        self.page.reload()
        error.wait_for()
        assert "not a step link" in error.inner_text()
        self.page.keyboard.press("ArrowRight")
        self.wait_for_position("step 1 of 4")
        assert error.is_hidden()

    def test_end_banner_tells_pass_loss_and_error_apart(self):
        passed = factories.episode(steps=3, success=True, end_reason=EndReason.DONE)
        lost = factories.episode(steps=5, success=False, end_reason=EndReason.MAX_STEPS)
        broken = factories.episode(
            steps=2, success=False, end_reason=EndReason.SANDBOX_ERROR,
            error="ZeroDivisionError: division by zero",
        )
        failed = factories.episode(steps=1, status=Status.FAILED, success=None,
                                   error="provider unreachable after 3 retries")
        expected = {
            passed: ("end-passed", "Passed"),
            lost: ("end-lost", "Not passed: step limit reached"),
            broken: ("end-error", "Not passed: the environment's code failed"),
            failed: ("end-error", "Stopped by an error"),
        }
        for episode, (kind, title) in expected.items():
            self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
            banner = self.page.locator("#episode-end")
            assert kind in banner.get_attribute("class"), episode.end_reason
            assert banner.locator("[data-role=end-title]").inner_text() == title
        self.page.goto(self.url(f"/episodes/{broken.uuid}/"))
        assert "ZeroDivisionError" in self.page.inner_text("#episode-end")
        self.page.goto(self.url(f"/episodes/{failed.uuid}/"))
        assert "not counted" in self.page.inner_text("#episode-end")
