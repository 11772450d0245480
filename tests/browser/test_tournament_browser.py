"""Tournaments in Chromium: the dashboard picks up a tournament started after the page loaded and
shows its finished state; the tournament page shows live standings and the crosstable."""

from __future__ import annotations

import pytest
from django.utils import timezone

from duels.models import Status, Tournament
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class TournamentBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("fan", "fan-pass-123")

    def test_dashboard_picks_up_a_new_tournament_and_shows_it_finish(self):
        self.page.goto(self.url("/"))
        assert "No tournament is running" in self.page.inner_text("#dashboard-progress")
        tournament = factories.tournament(name="Late starter", status=Status.RUNNING,
                                          duels_total=4)
        Tournament.objects.filter(pk=tournament.pk).update(duels_done=1)
        self.page.wait_for_selector("#dashboard-progress >> text=Late starter", timeout=20_000)
        assert "25%" in self.page.inner_text("#dashboard-progress")
        Tournament.objects.filter(pk=tournament.pk).update(
            status=Status.FINISHED, duels_done=4, finished_at=timezone.now()
        )
        self.page.wait_for_function(
            "() => document.querySelector('#dashboard-progress .badge').textContent === 'finished'",
            timeout=20_000,
        )
        assert "100%" in self.page.inner_text("#dashboard-progress")

    def test_tournament_page_shows_standings_and_crosstable(self):
        a, b = factories.player(name="ann"), factories.player(name="bob")
        tournament = factories.tournament(players=[a, b], status=Status.RUNNING, duels_total=2)
        self.page.goto(self.url(f"/tournaments/{tournament.uuid}/"))
        assert "Standings appear as duels finish" in self.page.inner_text("#standings")
        factories.finished_duel(a=a, b=b, tournament=tournament)
        # The standings are part of the live progress card: they update without a reload.
        self.page.wait_for_selector("#standings table.standings", timeout=20_000)
        first = self.page.locator("#standings table.standings tbody tr").first
        assert "ann" in first.inner_text()
        cells = first.locator("td").all_inner_texts()
        assert cells[2:6] == ["1", "1", "0", "0"]  # played, W, D, L
        cross = self.page.locator("#standings table.crosstable")
        assert "+100 pp" in cross.inner_text()
        assert self.page.locator("#standings a.metric[href='/glossary/#rating']").count() == 1
