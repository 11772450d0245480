"""The analytics page in Chromium (Playwright) against a live Daphne server.

Every chart must actually draw (plotly's SVG present) with data, and the empty state must show
without any console error; the CSP (script-src 'self') is in force, so an inline script or an
eval inside plotly would show up here as a console error.
"""

from __future__ import annotations

import pytest

from duels.models import TransferResult
from duels.services.analytics import analytics_refresh
from tests import factories
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

def synthetic_tournament() -> None:
    """Four players, two round-robin rounds, one in observe mode, plus a transfer result."""
    players = [factories.player(name=name) for name in ("atlas", "birch", "cedar", "dune")]
    results = [((False, False), (True, True)), ((False, True), (True, True)),
               ((True, True), (True, True)), ((False, False), (False, True))]
    count = 0
    for round_index in range(2):
        for i, a in enumerate(players):
            for b in players[i + 1:]:
                count += 1
                unhinted_a, hinted_a = results[(i + count) % 4]
                unhinted_b, hinted_b = results[(i + 2 * count + 1) % 4]
                duel = factories.finished_duel(
                    a=a, b=b, unhinted_a=unhinted_a, hinted_a=hinted_a, unhinted_b=unhinted_b,
                    hinted_b=hinted_b, observe=bool(round_index), round_index=round_index)
                TransferResult.objects.create(learner=b, environment=duel.env_a, benchmark="b",
                                              before=0.2, after=0.2 + 0.1 * count)


class AnalyticsBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.errors: list[str] = []
        self.page.on("console", self.console)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("response", lambda r: r.status >= 400 and self.errors.append(
            f"{r.status} {r.url}"))
        self.sign_in("analyst")  # analytics, like every page but the landing page, needs it

    def console(self, message) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} at {message.location.get('url')}")

    def test_empty_database_shows_not_enough_duels_yet(self):
        self.page.goto(f"{self.live_server_url}/analytics/")
        assert self.page.locator("#analytics-empty").inner_text().startswith(
            "Not enough duels yet")
        analytics_refresh()
        self.page.reload()
        assert "Figures computed at" in self.page.locator("#analytics-status").inner_text()
        assert self.page.locator("#analytics-empty").is_visible()
        assert self.errors == []

    def test_every_chart_draws_with_data(self):
        synthetic_tournament()
        analytics_refresh()
        self.page.goto(f"{self.live_server_url}/analytics/")
        charts = self.page.locator(".js-chart")
        slugs = [charts.nth(i).get_attribute("data-figure") for i in range(charts.count())]
        assert set(slugs) == {"ratings", "solve-author", "head-to-head-wins",
                              "head-to-head-duels", "setter-solver", "hint-gain", "difficulty",
                              "transfer", "observe"}
        for slug in slugs:
            drawn = self.page.locator(f'.js-chart[data-figure="{slug}"].js-plotly-plot .main-svg')
            drawn.first.wait_for(state="attached")
            # Each chart drew marks for its data, not just empty axes.
            marks = self.page.locator(
                f'.js-chart[data-figure="{slug}"] :is(.point, .hm, .heatmaplayer image, '
                f'.bars path)')
            assert marks.count() > 0, slug
        self.page.locator("#figure-ratings summary").click()
        assert "atlas" in self.page.locator("#figure-ratings table").inner_text()
        with self.page.expect_download() as download:
            self.page.locator('#figure-ratings a[download]').click()
        assert download.value.suggested_filename == "ratings.csv"
        assert self.errors == []

    def test_charts_draw_from_a_real_builtin_tournament(self):
        """What `make run` shows: a built-in tournament played through the real engine."""
        from django.test import override_settings

        from duels.engine.scheduler import tournament_drive
        from duels.engine.tournaments import tournament_create
        from duels.models import Player
        from duels.services.players import player_seed_builtin
        from sandbox_runner import available_backends

        backends = available_backends()
        need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
        player_seed_builtin()
        players = list(Player.objects.filter(builtin=True).order_by("name")[:3])
        backend = "bwrap" if "bwrap" in backends else backends[0]
        with override_settings(ENVDUELS_SANDBOX=backend, ENVDUELS_BUILTIN_LATENCY_MS=0):
            tournament = tournament_create(players=players, rounds=1, attempts=2, concurrency=4)
            assert tournament_drive(tournament=tournament) is True
        analytics_refresh()
        self.page.goto(f"{self.live_server_url}/analytics/")
        for slug in ("ratings", "head-to-head-wins", "setter-solver", "hint-gain"):
            marks = self.page.locator(
                f'.js-chart[data-figure="{slug}"] :is(.point, .hm, .heatmaplayer image, '
                f'.bars path)')
            marks.first.wait_for(state="attached")
            assert marks.count() > 0, slug
        for player in players:
            assert player.name in self.page.locator("#figure-ratings").inner_text()
        assert self.errors == []
