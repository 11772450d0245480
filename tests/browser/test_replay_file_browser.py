"""A downloaded replay file opened from disk with the network blocked: it replays, finds text
and shows notes, in Chromium."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from duels.models import Annotation, Step, TargetKind
from duels.publishing.html_replay import replay_html, replay_scope
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class ReplayFileBrowserTest(BrowserTestCase):
    def wait_for_position(self, text: str):
        self.page.wait_for_function(
            "t => document.querySelector('[data-role=position]').textContent === t", arg=text
        )

    def test_file_replays_searches_and_shows_notes_offline(self):
        duel = factories.finished_duel()
        first, second = duel.episodes.order_by("pk")[:2]
        Step.objects.filter(episode=first, index=1).update(
            observation="<b>a</b> salt #4000 </script>", thinking="weigh the salt")
        author = get_user_model().objects.create_user("reviewer")
        Annotation.objects.create(target_kind=TargetKind.STEP, episode=first, step_index=1,
                                  author=author, text="<i>look</i> at this step")
        episodes, title = replay_scope(episode_uuids=[first.uuid, second.uuid])
        text = replay_html(episodes=episodes, title=title)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "replay.html"
            path.write_text(text, encoding="utf-8")
            requests: list[str] = []
            self.context.route("**/*", lambda route: (
                requests.append(route.request.url),
                route.abort() if not route.request.url.startswith("file:") else route.continue_(),
            ))
            self.page.goto(path.as_uri())
            self.wait_for_position("reset of 1")
            assert self.page.locator(".transcript-row").count() == 2
            assert [url for url in requests if not url.startswith("file:")] == []
            self.page.keyboard.press("/")
            self.page.keyboard.type("salt #4000")
            self.page.keyboard.press("Enter")
            self.wait_for_position("step 1 of 1")
            assert self.page.inner_text("[data-role=find-status]") == "match 1 of 1 (in 1 step)"
            # A replay file is never live: it offers no "follow live" switch.
            assert not self.page.is_visible("[data-control=follow]")
            assert "follow live" not in self.page.inner_text("#replay")
            step = self.page.locator("[data-role=step]")
            assert "<b>a</b> salt #4000 </script>" in step.inner_text()
            assert step.locator("mark.find-hit").first.inner_text() == "salt #4000"
            notes = step.locator(".step-notes").inner_text()
            assert "reviewer: <i>look</i> at this step" in notes
            assert "<i>look</i> at this step" in self.page.inner_text("[data-offline=notes]")
            self.page.click("[data-action=first]")
            self.wait_for_position("reset of 1")
            # The picker opens the other run from the same file.
            self.page.select_option("[data-offline=picker] select", str(second.uuid))
            self.page.wait_for_url(lambda url: f"?episode={second.uuid}" in url)
            self.wait_for_position("reset of 1")
            assert self.page.inner_text("h1").startswith(f"{second.solver.name} on ")
