"""A published tournament opened from disk with the network blocked: the index, a duel, an
environment, a replay that plays and a compare view work, untrusted text stays text, and no
request leaves the page."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from duels.models import Annotation, Step, TargetKind
from duels.publishing import Leave, site_export
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EVIL = '<img src=x onerror="window.__xss = 1"> </script>'


class SiteExportBrowserTest(BrowserTestCase):
    def wait_for_position(self, text: str) -> None:
        self.page.wait_for_function(
            "t => document.querySelector('[data-role=position]').textContent === t", arg=text)

    def open_offline(self, path: Path) -> list[str]:
        """Open `path` with every non-file request refused; the list collects them all."""
        requests: list[str] = []
        errors: list[str] = []
        self.context.route("**/*", lambda route: (
            requests.append(route.request.url),
            route.continue_() if route.request.url.startswith("file:") else route.abort(),
        ))
        self.page.on("pageerror", lambda error: errors.append(str(error)))
        self.errors = errors
        self.page.goto(path.as_uri())
        return requests

    def test_published_site_works_from_disk_without_network(self):
        a, b, c = (factories.player(name=name) for name in ("ada", "bob", "cy"))
        tournament = factories.tournament(players=[a, b, c])
        duel = factories.finished_duel(a=a, b=b, tournament=tournament)
        factories.finished_duel(a=b, b=c, tournament=tournament)
        factories.finished_duel(a=c, b=a, tournament=tournament)
        unhinted = duel.episodes.get(environment=duel.env_a, seed=0, hint__isnull=True)
        hinted = duel.episodes.get(environment=duel.env_a, seed=0, hint__isnull=False)
        Step.objects.filter(episode=unhinted, index=1).update(observation=EVIL)
        duel.env_a.title = f"Maze {EVIL}"
        duel.env_a.save()
        reviewer = get_user_model().objects.create_user("reviewer")
        Annotation.objects.create(target_kind=TargetKind.ENVIRONMENT, environment=duel.env_a,
                                  author=reviewer, text=f"note {EVIL}", tags=["tricky"])
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "site"
            report = site_export(tournament_uuids=[tournament.uuid], out=out)
            assert report.episodes == 24
            requests = self.open_offline(out / "index.html")
            page = self.page
            # The index: leaderboard, the five findings, the hint-gain table, every duel.
            assert page.locator("#site-leaderboard h2").inner_text() == "Leaderboard"
            assert page.locator("#analytics-findings article.finding").count() == 5
            assert page.locator("#site-hint-gains tbody tr").count() == 3
            assert page.locator("#site-duels tbody tr").count() == 3
            # A duel, with its explanation.
            page.click(f"#site-duels a[href='duels/{duel.uuid}.html']")
            page.wait_for_selector("#why-result")
            assert page.inner_text("#duel-live h1").startswith("ada vs bob")
            # Its environment: highlighted source, hint, validation report, the note.
            page.click(f"a[href='../environments/{duel.env_a.uuid}.html']")
            page.wait_for_selector("#environment-source .source-lines")
            assert EVIL in page.inner_text("h1")
            assert f"note {EVIL}" in page.inner_text("#annotations")
            assert page.locator("#annotations form").count() == 0
            assert "Validation report" in page.inner_text("main")
            # A replay that plays, from the duel's seed table.
            page.go_back()
            page.click(f"a[href='../episodes/{unhinted.uuid}.html']")
            self.wait_for_position("reset of 1")
            page.click("[data-action=play]")
            self.wait_for_position("step 1 of 1")
            assert EVIL in page.inner_text("[data-role=step]")
            # Its compare link opens the two runs of the seed side by side.
            page.click("[data-compare-link]")
            page.wait_for_selector("#compare-table .compare-row")
            assert f"compare/{unhinted.uuid}.html" in page.url
            assert str(hinted.seed) in page.inner_text(".compare-head")
            assert page.evaluate("() => window.__xss") is None
            assert [url for url in requests if not url.startswith("file:")] == []
            assert self.errors == []

    def test_published_replays_find_as_the_site_does_and_no_page_logs_an_error(self):
        a, b = factories.player(name="ada"), factories.player(name="bob")
        tournament = factories.tournament(players=[a, b], name="Spring league of 2026 duels")
        duel = factories.finished_duel(a=a, b=b, tournament=tournament)
        episode = duel.episodes.get(environment=duel.env_a, seed=0, hint__isnull=True)
        Step.objects.filter(episode=episode, index=1).update(observation="a brass lantern")
        console: list[str] = []
        self.page.on("console", lambda message: console.append(
            f"{message.type}: {message.text}") if message.type == "error" else None)
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "site"
            site_export(tournament_uuids=[tournament.uuid], out=out)
            requests = self.open_offline(out / "episodes" / f"{episode.uuid}.html")
            page = self.page
            self.wait_for_position("reset of 1")
            # The find box works from the steps the page holds, as you type.
            assert page.is_visible("[data-role=find] input")
            page.keyboard.press("/")
            page.keyboard.type("lant")
            self.wait_for_position("step 1 of 1")
            assert page.inner_text("[data-role=find-status]") == "match 1 of 1 (in 1 step)"
            # A published episode is never live.
            assert not page.is_visible("[data-control=follow]")
            assert "follow live" not in page.inner_text("#replay")
            # Its environment page: the source's script loads from file://, and the page
            # does not teach choosing lines for a note it cannot take.
            page.goto((out / "environments" / f"{duel.env_a.uuid}.html").as_uri())
            page.wait_for_selector("#environment-source .source-lines")
            source = page.inner_text("#environment-source")
            assert "Notes that point at lines appear beside them" in source
            assert "shift-click" not in source and "To choose lines" not in source
            assert [url for url in requests if not url.startswith("file:")] == []
            assert console == [] and self.errors == []

            bare = Path(folder) / "bare"
            site_export(tournament_uuids=[tournament.uuid], out=bare, leave=Leave(notes=True))
            page.goto((bare / "environments" / f"{duel.env_a.uuid}.html").as_uri())
            page.wait_for_selector("#environment-source .source-lines")
            assert "Notes that point at lines" not in page.inner_text("main")
            assert console == []
