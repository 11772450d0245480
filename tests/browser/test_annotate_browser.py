"""Chromium annotates an environment (tag + line range), reloads, filters the list by the tag,
and uses the review queue's keyboard shortcuts. Live Daphne server, Playwright."""

from __future__ import annotations

import pytest

from duels.models import Annotation
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


class AnnotateBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("annotator", "annotator-pass-123")

    def test_annotate_reload_and_filter_by_tag(self):
        environment = factories.environment(title="Counting room")
        factories.environment(title="Untagged maze")
        page = self.page
        page.goto(f"{self.live_server_url}/environments/{environment.uuid}/annotations/")
        page.check("input[name=tags][value=elegant]")
        page.fill("input[name=other_tags]", "off-by-one")
        page.select_option("select[name=rating]", "4")
        page.fill("textarea[name=text]", HOSTILE)
        page.fill("input[name=line_start]", "3")
        page.fill("input[name=line_end]", "5")
        page.click("#annotations button[type=submit]")
        # htmx swaps the panel in place: the note appears without a page load.
        page.wait_for_selector("#annotations .note .badge.tag >> text=off-by-one")
        assert page.evaluate("window.__xss") is None
        page.reload()
        note = page.locator("#annotations .note").first
        assert note.locator(".badge.tag").all_inner_texts() == ["elegant", "off-by-one"]
        assert note.locator(".note-lines").inner_text() == "lines 3–5"
        assert HOSTILE in note.locator(".note-text").inner_text()
        page.goto(f"{self.live_server_url}/environments/{environment.uuid}/annotations/")
        noted = page.locator("#annotated-source tr.noted").evaluate_all(
            "rows => rows.map(row => row.id)"
        )
        assert noted == ["line-3", "line-4", "line-5"]
        assert HOSTILE in page.inner_text("#annotated-source tr#line-3 .gutter-note")
        assert page.evaluate("window.__xss") is None

        page.goto(f"{self.live_server_url}/environments/?tag=off-by-one")
        rows = page.locator("#environment-results tbody tr")
        assert rows.count() == 1
        assert "Counting room" in rows.first.inner_text()

    def test_review_queue_keyboard_shortcuts(self):
        first = factories.environment(title="Queue first")
        factories.environment(title="Queue second")
        page = self.page
        page.goto(f"{self.live_server_url}/annotate/")
        assert "Queue first" in page.inner_text("#review-item h2")
        page.keyboard.press("3")  # the third starter tag: "trivial"
        assert page.is_checked("[data-shortcut='3'] input")
        page.keyboard.press("s")
        page.wait_for_url("**/annotate/?after=*")
        assert "Queue second" in page.inner_text("#review-item h2")
        assert "Saved your note on Queue first" in page.inner_text(".messages")
        note = Annotation.objects.get(environment=first)
        assert note.tags == ["trivial"]
        page.keyboard.press("n")
        page.wait_for_selector("text=Nothing left in this queue")
