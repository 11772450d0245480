"""Chromium annotates an environment (tag + line range), reloads, filters the list by the tag,
and uses the review queue's keyboard shortcuts. Live Daphne server, Playwright."""

from __future__ import annotations

import os

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.contrib.auth import get_user_model

from duels.models import Annotation
from tests import factories
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
HOSTILE = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


class AnnotateBrowserTest(ChannelsLiveServerTestCase):
    serve_static = True

    @classmethod
    def setUpClass(cls):
        need(os.path.exists(CHROMIUM), "Chromium not installed at /usr/bin/chromium")
        super().setUpClass()
        from playwright.sync_api import sync_playwright

        # Playwright's sync API runs an event loop in this thread; the test's own ORM calls
        # stay synchronous (Playwright's documented setup with Django).
        cls._async_unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        cls.playwright = sync_playwright().start()
        cls.browser = cls.playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.playwright.stop()
        if cls._async_unsafe is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = cls._async_unsafe
        super().tearDownClass()

    def setUp(self):
        get_user_model().objects.create_user("annotator", password="annotator-pass-123")
        self.context = self.browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.page.goto(self.live_server_url + "/accounts/login/?next=/")
        self.page.fill("#id_username", "annotator")
        self.page.fill("#id_password", "annotator-pass-123")
        self.page.click("button[type=submit]")
        self.page.wait_for_url(self.live_server_url + "/")

    def tearDown(self):
        self.context.close()

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
        marked = page.locator(".annotated-source li.marked").evaluate_all(
            "items => items.map(item => item.value)"
        )
        assert marked == [3, 4, 5]
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
        note = Annotation.objects.get(environment=first)
        assert note.tags == ["trivial"]
        page.keyboard.press("n")
        page.wait_for_selector("text=Nothing left in this queue")
