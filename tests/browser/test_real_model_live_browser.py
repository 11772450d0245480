"""The real model's episode live in Chromium: SmolLM2-135M-Instruct (llama-cpp-python on
127.0.0.1) writes its reply token by token and the replay shows it growing before the step is
stored, then the stored step holds the whole reply. Real worker loop, real sandbox, Redis
between the worker and the live Daphne server."""

from __future__ import annotations

import os
import tempfile
import threading

import pytest
from django.conf import settings
from django.db import close_old_connections

from duels.engine.doorbell import doorbell_flush
from duels.engine.episodes import episode_run
from duels.local_models.install import local_model_ready
from duels.local_models.players import local_model_register
from duels.local_models.server import local_model_start, local_model_stop
from duels.models import Status, Step
from sandbox_runner import available_backends
from tests import factories
from tests.envduels_site.test_redis_layer import redis_reachable
from tests.helpers.browser import BrowserTestCase
from tests.helpers.local_model import NAME, TEST_CONTEXT
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.local_model, pytest.mark.slow]

ONE_STEP_SOURCE = '''
class Environment:
    max_steps = 1

    def reset(self, seed):
        return "A locked door. The key is under the mat. Say `open door` when you hold it."

    def step(self, action):
        ok = action.strip() == "open door"
        return {"observation": "It opens." if ok else "Nothing.", "done": True, "success": ok}
'''
# Every length the live reply's text takes, recorded in the page as it changes.
RECORD_LENGTHS = """() => {
  window.liveLengths = [];
  new MutationObserver(() => {
    const text = document.querySelector('#live-reply .live-reply-text');
    if (text) window.liveLengths.push(text.textContent.length);
  }).observe(document.querySelector('#live-reply'),
             {childList: true, subtree: true, characterData: true});
}"""


class RealModelLiveBrowserTest(BrowserTestCase):
    @classmethod
    def setUpClass(cls):
        need(redis_reachable(os.environ.get("REDIS_URL", "")),
             "Redis not reachable: set REDIS_URL")
        need("redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"].lower(),
             "the channel layer is not Redis (REDIS_URL was not set at startup)")
        backends = available_backends()
        need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
        need(local_model_ready(name=NAME) is not None,
             f"the local model {NAME} is not installed: run `python manage.py local_model "
             f"install {NAME}`")
        cls.backend = "bwrap" if "bwrap" in backends else backends[0]
        cls.server = local_model_start(name=NAME, context=TEST_CONTEXT)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        local_model_stop(cls.server)

    def setUp(self):
        super().setUp()
        self.sign_in("watcher", "watcher-pass-123")

    def test_the_real_models_reply_grows_live_then_one_stored_step_holds_it(self):
        with (
            tempfile.TemporaryDirectory() as slots,
            self.settings(ENVDUELS_SANDBOX=self.backend, ENVDUELS_PLAYER_SLOT_DIR=slots),
        ):
            solver = local_model_register(name=NAME, base_url=self.server.base_url,
                                          context_window=self.server.context_window,
                                          params={"max_tokens": 64})
            environment = factories.environment(source=ONE_STEP_SOURCE, max_steps=1)
            episode = factories.episode(status=Status.PENDING, success=None, solver=solver,
                                        environment=environment)
            self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
            self.page.wait_for_function(
                "() => document.querySelector('[data-role=live]').textContent === 'live'")
            self.page.evaluate(RECORD_LENGTHS)

            def work():
                try:
                    episode_run(episode=episode)
                    doorbell_flush(timeout=5)
                finally:
                    close_old_connections()

            worker = threading.Thread(target=work)
            worker.start()
            worker.join(timeout=600)
        assert not worker.is_alive()
        self.page.wait_for_function(
            "() => document.querySelectorAll('.transcript-row').length === 2", timeout=60_000)
        stored = Step.objects.get(episode=episode, index=1)
        lengths = self.page.evaluate("window.liveLengths")
        growing = sorted({length for length in lengths if length > 0})
        # Token by token: the text was seen at several lengths, each a prefix of the reply.
        assert len(growing) >= 3, lengths
        assert growing[-1] <= len(stored.reply)
        assert stored.input_tokens > 0 and stored.output_tokens > 0
        assert bool(stored.action) != bool(stored.format_error)
        assert self.page.locator("#live-reply").evaluate("node => node.childElementCount") == 0
