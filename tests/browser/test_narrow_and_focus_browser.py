"""Rough edges in Chromium: no page scrolls sideways at 390 px and the nav folds under Menu; a
skip link is the first Tab stop; focus survives the live duel refresh; notes stay beside their
lines whatever a line's length, and ?lines= scrolls to the range; a replay waiting for its first
step says so."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from duels.models import Annotation, Duel, Status, TargetKind
from tests import factories
from tests.duels.panels.handmade import write_export, write_snapshot
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LONG_LINE_SOURCE = factories.TRIVIAL_SOURCE + "\n# " + "a_very_long_comment_word " * 60 + "\n" + (
    "\n".join(f"# filler line {n}" for n in range(80)))


class NarrowScreenBrowserTest(BrowserTestCase):
    viewport = {"width": 390, "height": 844}

    def assert_none_scrolls_sideways(self, pages: list[str]) -> None:
        wide = []
        for path in pages:
            self.page.goto(self.url(path))
            overflow = self.page.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            if overflow > 0:
                wide.append(f"{path}: {overflow} px too wide")
        assert wide == [], "\n".join(wide)

    def test_panel_pages_do_not_scroll_sideways(self):
        """A panel's long ids, its 64-character hash and its wide tables stay on a phone."""
        need(sandbox_works(), "no sandbox backend works here")
        from duels.models import Panel

        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write_export(root / "export")
            write_snapshot(root / "snapshot", root / "export")
            call_command("import", str(root / "export"), "--name", "original",
                         stdout=io.StringIO())
            call_command("import", str(root / "snapshot"), "--panel", "original",
                         stdout=io.StringIO())
        panel = Panel.objects.get()
        self.sign_in("narrow-panels", "narrow-pass-123")
        self.assert_none_scrolls_sideways(
            ["/panels/", f"/panels/{panel.uuid}/", f"/panels/{panel.uuid}/compare/"])

    def test_no_page_scrolls_sideways_and_the_nav_folds(self):
        duel = factories.finished_duel()
        tournament = factories.tournament(players=[duel.a, duel.b], status=Status.FINISHED,
                                          duels_total=1, duels_done=1)
        episode = duel.episodes.filter(condition="hinted").first()
        get_user_model().objects.create_user("narrow", password="narrow-pass-123", is_staff=True)
        self.sign_in("narrow", "narrow-pass-123", create=False)
        pages = [
            "/", "/players/", f"/players/{duel.a.uuid}/", "/environments/",
            f"/environments/{duel.env_a.uuid}/", "/duels/", f"/duels/{duel.uuid}/", "/duels/new/",
            f"/episodes/{episode.uuid}/", f"/episodes/{episode.uuid}/compare/",
            f"/episodes/{episode.uuid}/steps/1/call/", "/duels/search/?q=number",
            "/tournaments/", f"/tournaments/{tournament.uuid}/", "/analytics/", "/annotate/",
            "/glossary/", "/export/", "/import/", "/workers/",
        ]
        self.assert_none_scrolls_sideways(pages)
        nav = self.page.locator("nav.nav")
        assert nav.is_hidden()
        self.page.click("label.nav-toggle-label")
        assert nav.is_visible() and nav.locator("a").count() >= 10
        sign_out = self.page.get_by_role("button", name="Sign out")
        box = sign_out.bounding_box()
        assert box and box["x"] + box["width"] <= 390


class FocusAndNotesBrowserTest(BrowserTestCase):
    viewport = {"width": 1400, "height": 900}

    def test_skip_link_is_the_first_tab_stop(self):
        self.sign_in("skipper", "skipper-pass-123")
        self.page.goto(self.url("/duels/new/"))
        self.page.keyboard.press("Tab")
        assert self.page.evaluate("document.activeElement.textContent") == "Skip to content"
        self.page.keyboard.press("Enter")
        assert self.page.evaluate("document.activeElement.id") == "main"
        self.page.keyboard.press("Tab")
        tag = self.page.evaluate("document.activeElement.closest('header') === null")
        assert tag, "after the skip link, Tab moves inside the page, not through the nav"

    def test_focus_survives_the_live_duel_refresh(self):
        duel = factories.finished_duel()
        Duel.objects.filter(pk=duel.pk).update(status=Status.RUNNING, outcome=None)
        self.sign_in("keyboard", "keyboard-pass-123")
        self.page.goto(self.url(f"/duels/{duel.uuid}/"))
        link = self.page.locator("#duel-live a[href*='/compare/']").first
        link.focus()
        href = link.get_attribute("href")
        with self.page.expect_response(lambda response: response.request.headers.get(
                "hx-request") == "true", timeout=20_000):
            pass
        self.page.wait_for_timeout(300)  # htmx settles the swap after the response
        assert self.page.evaluate("document.activeElement.getAttribute('href')") == href

    def test_notes_stay_beside_long_lines_and_lines_scrolls_to_the_range(self):
        environment = factories.environment(source=LONG_LINE_SOURCE)
        author = get_user_model().objects.create_user("noter", password="noter-pass-123")
        Annotation.objects.create(target_kind=TargetKind.ENVIRONMENT, environment=environment,
                                  author=author, text="look here", line_start=70, line_end=72)
        self.sign_in("noter", "noter-pass-123", create=False)
        for width in (1280, 1920):
            self.page.set_viewport_size({"width": width, "height": 900})
            self.page.goto(self.url(f"/environments/{environment.uuid}/?lines=70-72"))
            note = self.page.locator(".gutter-note").first
            box = note.bounding_box()
            assert box and box["x"] + box["width"] <= width, f"note off-screen at {width} px"
            row = self.page.locator("#line-70").bounding_box()
            assert abs(row["y"] - box["y"]) < 40, "the note sits beside its first line"
            assert 0 <= row["y"] <= 900, f"?lines= did not scroll to line 70 at {width} px"

    def test_a_replay_waiting_for_its_first_step_says_so(self):
        episode = factories.episode(status=Status.RUNNING, success=None)
        self.sign_in("waiter", "waiter-pass-123")
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        waiting = self.page.locator("[data-role=step] .waiting")
        waiting.wait_for()
        assert "Waiting for the first step" in waiting.inner_text()
        factories.step_rows(episode, count=1)
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=position]').textContent === 'step 1 of 1'")
        assert waiting.count() == 0
