"""After "Recompute now" the analytics page updates by itself once the new figures are ready:
the status line keeps asking while the recomputation is queued or running, then reloads."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from duels.models import AnalyticsSnapshot
from duels.services.analytics import analytics_refresh
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class AnalyticsRecomputeBrowserTest(BrowserTestCase):
    def test_the_page_reloads_when_the_recomputation_is_done(self):
        self.sign_in("analyst")
        factories.finished_duel()
        first = analytics_refresh()
        self.page.goto(self.url("/analytics/"))
        status = self.page.locator("#analytics-status")
        # Current figures and nothing under way: the page does not poll.
        assert status.get_attribute("hx-get") is None

        # The button posts the form and lands back on the page (a navigation of its own), so
        # the marker that proves the later reload is set only once the queued page has loaded.
        self.page.get_by_role("button", name="Recompute now").click()
        self.page.wait_for_selector("text=a recomputation is queued")
        self.page.wait_for_load_state("load")
        assert f"shown={first.pk}" in status.get_attribute("hx-get")
        self.page.evaluate("window.__beforeReload = true")
        assert AnalyticsSnapshot.objects.count() == 1

        # A worker runs the queued task, as `manage.py worker` would.
        call_command("db_worker", "--batch", "--queue-name", "analytics", "--interval", "0.05",
                     "--no-reload", "--no-startup-delay", verbosity=0)
        newest = AnalyticsSnapshot.objects.order_by("-pk").first()
        assert newest.pk != first.pk

        # The page notices on its own: reloaded (the marker is gone), showing the new figures
        # and no longer asking.
        self.page.wait_for_function("() => window.__beforeReload === undefined")
        status = self.page.locator("#analytics-status")
        status.wait_for()
        assert status.get_attribute("hx-get") is None
        assert "a recomputation is queued" not in status.inner_text()
