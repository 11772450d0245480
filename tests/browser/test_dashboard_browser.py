"""Real-browser tests: Playwright drives Debian's Chromium against a live Daphne server.

The server runs in its own process (ChannelsLiveServerTestCase) with the in-memory channel
layer, so doorbells from this test process never reach it: live steps arrive through the
consumer's 0.5 s database poll, exactly as with a worker whose channel layer is not shared.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.db import close_old_connections

from duels.models import Duel, Episode, Status, Step
from tests import factories
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAYLOADS = (
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 2">',
    '<a href="javascript:window.__xss = 3">click me</a>',
    "{{ 7*7 }}",
    '{% now "Y" %}',
)
EVIL = " ".join(PAYLOADS)


class DashboardBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.dialogs: list[str] = []
        self.page.on(
            "dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss())
        )
        self.sign_in("viewer", "viewer-pass-123")

    def position(self) -> str:
        return self.page.inner_text("[data-role=position]")

    def wait_for_position(self, text: str):
        self.page.wait_for_function(
            "t => document.querySelector('[data-role=position]').textContent === t", arg=text
        )

    # --- tests ---------------------------------------------------------------------------

    def test_running_episode_streams_in_and_ends(self):
        episode = factories.episode(steps=2, status=Status.RUNNING, success=None)
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.wait_for_position("step 2 of 2")
        assert self.page.inner_text("[data-role=live]") == "live"

        def write_steps():
            for index in range(3, 9):
                Step.objects.create(
                    episode=episode,
                    index=index,
                    action=f"move {index}",
                    observation=f"room {index}",
                    reply=f"ACTION: move {index}",
                )
                time.sleep(0.15)
            Episode.objects.filter(pk=episode.pk).update(
                status=Status.FINISHED, success=True, end_reason="done", steps=8
            )
            close_old_connections()

        writer = threading.Thread(target=write_steps)
        writer.start()
        self.wait_for_position("step 8 of 8")  # follow-live keeps the newest step in view
        writer.join()
        self.page.wait_for_function(
            "() => document.querySelector('#episode-status .badge').textContent === 'finished'"
        )
        assert "room 8" in self.page.inner_text("[data-role=step]")
        assert self.page.inner_text("[data-role=live]") == "episode finished"
        # Every step arrived exactly once: walk back through all of them.
        self.page.keyboard.press("Home")
        self.wait_for_position("reset of 8")
        for index in range(1, 9):
            self.page.keyboard.press("ArrowRight")
            self.wait_for_position(f"step {index} of 8")

    def test_replay_with_keyboard_and_step_fragment(self):
        episode = factories.episode(steps=20, success=True)
        Step.objects.filter(episode=episode, index=7).update(format_error="no ACTION line")
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-5"))
        self.wait_for_position("step 5 of 20")
        assert self.page.locator("#steps-static").is_hidden()
        self.page.keyboard.press("ArrowRight")
        self.wait_for_position("step 6 of 20")
        assert self.page.url.endswith("#step-6")
        self.page.keyboard.press("ArrowRight")
        self.wait_for_position("step 7 of 20")
        assert "Format error" in self.page.inner_text("[data-role=step] .alert.bad")
        self.page.keyboard.press("ArrowLeft")
        self.wait_for_position("step 6 of 20")
        self.page.keyboard.press("End")
        self.wait_for_position("step 20 of 20")
        assert "passed" in self.page.inner_text("[data-role=step]")
        self.page.keyboard.press("Home")
        self.wait_for_position("reset of 20")
        self.page.select_option("[data-control=speed]", "10")
        self.page.locator("body").click(position={"x": 5, "y": 5})
        self.page.keyboard.press(" ")
        assert self.page.inner_text("[data-action=play]") == "Pause"
        self.wait_for_position("step 20 of 20")  # played through at 10x, then stops
        self.page.wait_for_function(
            "() => document.querySelector('[data-action=play]').textContent === 'Play'"
        )
        reply = self.page.locator("[data-role=step] details.step-reply")
        assert not reply.evaluate("node => node.open")
        reply.locator("summary").click()
        assert "ACTION: 20" in reply.inner_text()

    def test_compare_view_marks_first_divergence(self):
        environment = factories.environment()
        solver = factories.player()
        hint = factories.hint(environment=environment)
        unhinted = factories.episode(environment=environment, solver=solver, steps=6)
        hinted = factories.episode(environment=environment, solver=solver, hint=hint, steps=6)
        Step.objects.filter(episode=hinted, index__gte=4).update(action="take the key")
        self.page.goto(self.url(f"/episodes/{unhinted.uuid}/"))
        self.page.click("text=compare with the hinted run")
        marker = self.page.locator("#divergence")
        assert marker.is_visible()
        assert marker.locator(".badge").inner_text().endswith("4")
        assert self.page.locator("td.action-differs").count() == 6  # steps 4..6, both sides

    def test_untrusted_text_is_escaped_everywhere(self):
        duel = factories.finished_duel()
        for environment in (duel.env_a, duel.env_b):
            environment.title = f"Title {EVIL}"
            environment.family = "{{ 7*7 }}"
            environment.save()
        duel.hint_a.text = f"Hint {EVIL}"
        duel.hint_a.save()
        episode = duel.episodes.filter(hint=duel.hint_a).first()
        Step.objects.filter(episode=episode).update(
            observation=f"Obs {EVIL}",
            action=f"Act {EVIL}",
            reply=f"Reply {EVIL}",
            format_error=f"Err {EVIL}",
        )
        Episode.objects.filter(pk=episode.pk).update(error=f"Crash {EVIL}")
        pages = [
            "/",
            "/duels/",
            f"/duels/{duel.uuid}/",
            "/environments/",
            f"/environments/{duel.env_a.uuid}/",
            f"/episodes/{episode.uuid}/",
            f"/episodes/{episode.uuid}/#step-1",
            f"/episodes/{episode.uuid}/compare/",
            f"/duels/?q={'glowing'}",
            f"/players/{duel.a.uuid}/",
        ]
        for path in pages:
            self.page.goto(self.url(path))
            if path.startswith("/episodes/") and "compare" not in path:
                self.page.wait_for_selector("[data-role=step] article.step")
            assert self.page.evaluate("() => window.__xss") is None, path
            assert self.page.locator("img").count() == 0, path
            assert self.page.locator("a[href^='javascript:']").count() == 0, path
            assert self.page.locator("main script").count() == 0, path
            overflow = self.page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, f"{path} is wider than the window by {overflow}px"
        # The payloads show as the literal text they are, including in the live viewer.
        shown = self.page.inner_text("body")
        assert "{{ 7*7 }}" in shown and "<script>window.__xss = 1</script>" in shown
        self.page.goto(self.url(f"/episodes/{episode.uuid}/#step-1"))
        self.page.wait_for_selector("[data-role=step] .step-action code")
        step_text = self.page.inner_text("[data-role=step]")
        assert '<img src=x onerror="window.__xss = 2">' in step_text
        assert '{% now "Y" %}' in step_text and "Err <script>" in step_text
        assert self.dialogs == []

    def test_trigger_a_duel_and_watch_it_finish(self):
        from duels.engine.scheduler import duel_run
        from duels.services.players import player_seed_builtin
        from sandbox_runner import available_backends

        need(bool(available_backends()), "no sandbox backend works here")
        player_seed_builtin()
        self.page.goto(self.url("/duels/new/"))
        options = self.page.locator("#id_a option").all_inner_texts()
        builtin = [text for text in options if "built-in" in text]
        assert len(builtin) >= 2
        self.page.select_option("#id_a", label=builtin[0])
        self.page.select_option("#id_b", label=builtin[1])
        self.page.fill("#id_attempts", "1")
        self.page.click("#duel-form button[type=submit]")
        self.page.wait_for_url(re.compile(r".*/duels/[0-9a-f-]{36}/$"))
        duel = Duel.objects.get()
        assert self.page.url.endswith(f"/duels/{duel.uuid}/")
        assert "following live" in self.page.inner_text("#duel-live")

        def run():
            try:
                duel_run(duel=duel)
            finally:
                close_old_connections()

        runner = threading.Thread(target=run)
        runner.start()
        self.page.wait_for_function(
            "() => !document.querySelector('#duel-live').hasAttribute('hx-trigger')",
            timeout=120_000,
        )
        runner.join(timeout=60)
        heading = self.page.inner_text("#duel-live h1")
        duel.refresh_from_db()
        assert duel.status in {Status.FINISHED, Status.FAILED}
        assert duel.status in heading
        if duel.status == Status.FINISHED:
            assert duel.outcome is not None
            assert self.page.locator("#duel-live a[href^='/episodes/']").count() >= 2
