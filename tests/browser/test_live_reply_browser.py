"""A live episode in Chromium: the reply appears while the model is still writing it, then the
stored step replaces it, exactly once. Real worker loop, real sandbox, the official Anthropic SDK
streaming from the loopback server, Redis between the worker and the live Daphne server."""

from __future__ import annotations

import os
import tempfile
import threading
from unittest import mock

import pytest
from django.conf import settings
from django.db import close_old_connections

from duels.engine.doorbell import doorbell_flush
from duels.engine.episodes import episode_run
from duels.models import Status, Step
from sandbox_runner import available_backends
from tests import factories
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply
from tests.envduels_site.test_redis_layer import redis_reachable
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ONE_STEP_SOURCE = '''
class Environment:
    max_steps = 1

    def reset(self, seed):
        return "A locked door. The key is under the mat."

    def step(self, action):
        ok = action.strip() == "open door"
        return {"observation": "It opens." if ok else "Nothing.", "done": True, "success": ok}
'''
REPLY = "The key is under the mat, so I lift the mat, take the key and use it.\nACTION: open door"
LIVE = "#live-reply"


class LiveReplyBrowserTest(BrowserTestCase):
    @classmethod
    def setUpClass(cls):
        # The worker (this process) and the server (a forked process) share only Redis.
        need(redis_reachable(os.environ.get("REDIS_URL", "")),
             "Redis not reachable: set REDIS_URL")
        need("redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"].lower(),
             "the channel layer is not Redis (REDIS_URL was not set at startup)")
        backends = available_backends()
        need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
        cls.backend = "bwrap" if "bwrap" in backends else backends[0]
        super().setUpClass()

    def setUp(self):
        super().setUp()
        self.sign_in("watcher", "watcher-pass-123")

    def test_partial_reply_shows_before_the_step_commits_then_one_stored_step(self):
        gate = threading.Event()
        with (
            LoopbackServer() as server,
            tempfile.TemporaryDirectory() as slots,
            self.settings(ENVDUELS_SANDBOX=self.backend, ENVDUELS_PLAYER_SLOT_DIR=slots),
            mock.patch.dict(os.environ, {"LOOPBACK_TEST_API_KEY": "sk-loopback-test-0123456789"}),
        ):
            solver = loopback_player(server, "anthropic", name="claude-live",
                                     params={"actions": "text"})
            solver.save()
            environment = factories.environment(source=ONE_STEP_SOURCE, max_steps=1)
            episode = factories.episode(status=Status.PENDING, success=None, solver=solver,
                                        environment=environment)
            # Three deltas 0.15 s apart (each is rung), then the model "pauses" until the gate.
            server.script(reply(REPLY, thinking="Mats hide keys.", chunk_delay_s=0.15,
                                gate=gate, gate_after=3))
            self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
            # Partial text is never stored: the viewer must be connected before it is written.
            self.page.wait_for_function(
                "() => document.querySelector('[data-role=live]').textContent === 'live'"
            )

            def work():
                try:
                    episode_run(episode=episode)
                    doorbell_flush(timeout=5)
                finally:
                    close_old_connections()

            worker = threading.Thread(target=work)
            worker.start()
            try:
                self.page.wait_for_function(
                    "() => (document.querySelector('#live-reply .live-reply-text') || {})"
                    ".textContent === 'The key is under the mat'",
                    timeout=90_000,  # the worker starts a sandbox first, on a busy machine
                )
                # Seen while the reply is still being written: nothing is stored for it yet.
                assert not Step.objects.filter(episode=episode, index=1).exists()
                header = self.page.inner_text(f"{LIVE} .step-head")
                assert header == "step 1 · being written…"
                # The thinking is there, collapsed.
                assert self.page.locator(f"{LIVE} details.step-thinking").get_attribute(
                    "open") is None
            finally:
                gate.set()
                worker.join(timeout=60)
        assert not worker.is_alive()
        self.page.wait_for_function(
            "() => document.querySelector('#live-reply').childElementCount === 0", timeout=30_000
        )
        self.page.wait_for_function(
            "() => document.querySelectorAll('.transcript-row').length === 2", timeout=30_000
        )
        rows = self.page.locator(".transcript-row").evaluate_all(
            "rows => rows.map(r => r.dataset.index)"
        )
        assert rows == ["0", "1"]  # exactly one stored step 1, no partial left over
        assert Step.objects.filter(episode=episode, index=1).count() == 1
        current = self.page.locator("[data-role=step] article.step")
        assert current.get_attribute("data-index") == "1"
        assert "ACTION: open door" in current.locator("details.step-reply pre").text_content()
        assert current.locator("details.step-thinking pre").text_content() == "Mats hide keys."
        assert current.locator("details.step-thinking").get_attribute("open") is None
