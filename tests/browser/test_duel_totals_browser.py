"""A duel page watched live until the duel ends shows the same totals and setter calls as a
reload of that page (the live refresh swaps them in; nothing stays at its first value)."""

from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections

from duels.models import Duel, Player, Status, Step
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class DuelTotalsBrowserTest(BrowserTestCase):
    def read_totals(self) -> tuple[str, str]:
        return (self.page.inner_text("#duel-time-cost dl"),
                self.page.inner_text("#setter-calls"))

    def test_totals_watched_live_equal_a_reload(self):
        from duels.engine.duels import duel_create
        from duels.engine.scheduler import duel_run
        from duels.services.players import player_seed_builtin
        from sandbox_runner import available_backends

        need(bool(available_backends()), "no sandbox backend works here")
        player_seed_builtin()
        self.sign_in("watcher")
        a, b = Player.objects.filter(builtin=True).order_by("name")[:2]
        duel = duel_create(a=a, b=b, attempts=1)
        self.page.goto(self.url(f"/duels/{duel.uuid}/"))
        assert "following live" in self.page.inner_text("#duel-live")
        live_start = self.read_totals()
        assert "No setter calls recorded for this duel yet" in live_start[1]

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
        duel = Duel.objects.get(pk=duel.pk)
        assert duel.status == Status.FINISHED
        watched = self.read_totals()
        self.page.reload()
        reloaded = self.read_totals()
        assert watched == reloaded
        assert watched != live_start
        # The step count is the solvers' actions: the seed tables' sum, no resets.
        actions = Step.objects.filter(episode__duel=duel, index__gt=0).count()
        assert actions > 0
        assert f"solver steps (resets not counted)\n{actions:,}" in watched[0]
        assert "No setter calls recorded" not in watched[1]
