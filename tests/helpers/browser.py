"""Real-browser test base: Playwright drives Debian's Chromium against a live Daphne server.

The server runs in its own process (ChannelsLiveServerTestCase) forked from the test process,
sharing the test database file.
"""

from __future__ import annotations

import os

from channels.testing import ChannelsLiveServerTestCase
from django.contrib.auth import get_user_model

from tests.helpers.parts import need

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class BrowserTestCase(ChannelsLiveServerTestCase):
    """One Chromium per test class; a fresh browser context (and page) per test."""

    serve_static = True
    viewport = {"width": 1280, "height": 900}

    @classmethod
    def setUpClass(cls):
        need(os.path.exists(CHROMIUM), f"Chromium not installed at {CHROMIUM}")
        from concurrent.futures import ThreadPoolExecutor

        from asgiref.sync import SyncToAsync
        from channels.layers import channel_layers

        # The server process is forked from this one. It must not inherit a channel layer
        # bound to an earlier async test's loop, nor asgiref's one-thread executor whose
        # thread (started by an earlier async test) does not exist after the fork.
        channel_layers.backends = {}
        SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)
        super().setUpClass()
        # The forked server imports its views on its first request, which takes far longer than
        # a page's timeout on a busy machine: make that request before any test counts time.
        import urllib.request

        urllib.request.urlopen(f"http://{cls.host}:{cls._port}/accounts/login/", timeout=180).read()
        from playwright.sync_api import sync_playwright

        # Playwright's sync API keeps an event loop in this thread; Django's ORM calls made by
        # the test itself are still plain synchronous calls (Playwright's documented setup).
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
        self.context = self.browser.new_context(viewport=self.viewport)
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)

    def tearDown(self):
        self.context.close()

    def url(self, path: str) -> str:
        return self.live_server_url + path

    def sign_in(self, username: str, password: str = "browser-pass-123", *, create: bool = True,
                operator: bool = True):
        """Sign in through the login form (creating the user first unless told not to; a created
        user is an operator, who may start duels, unless `operator` is False)."""
        if create:
            user = get_user_model().objects.create_user(username, password=password)
            if operator:
                from django.contrib.auth.models import Group

                from duels.services.access import OPERATORS_GROUP

                user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
        self.page.goto(self.url("/accounts/login/?next=/"))
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", password)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(self.url("/"))
