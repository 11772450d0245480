"""Comparing evaluations in Chromium: three evaluations of the hand-written panel chosen, the
rows filtered to flipped seeds, and one cell opening that evaluation's pair of transcripts in
compare."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from duels.models import Episode, Evaluation, Panel, Status
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "panel"
PLAYERS = ("builtin-rookie", "builtin-cautious", "builtin-ace")


class PanelCompareBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        need(sandbox_works(), "no sandbox backend works here")
        quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
        call_command("seed_builtin", verbosity=0)
        call_command("import", str(EXAMPLES / "export"), "--name", "example", **quiet)
        # The plays are created as the form creates them, then given a pattern of results
        # with flips in it (the filters themselves are checked on real plays in
        # tests/duels/panels/test_compare_grid.py).
        for index, name in enumerate(PLAYERS):
            call_command("evaluate", "--panel", "example", "--player", name,
                         "--seeds-per-environment", "2", **quiet)
            for play in Episode.objects.filter(evaluation__player__name=name):
                hinted = play.condition == "hinted"
                play.status, play.end_reason = Status.FINISHED, ""
                play.success = (index + play.environment_id + play.seed + hinted) % 3 == 0
                play.save()
        self.sign_in("comparer", "comparer-pass-123")

    def test_three_evaluations_filtered_to_flipped_seeds_open_a_pair(self):
        panel = Panel.objects.get()
        flipped = set()
        for evaluation in Evaluation.objects.filter(panel=panel):
            plays = {(play.environment_id, play.seed, play.condition): play.success
                     for play in Episode.objects.filter(evaluation=evaluation)}
            flipped |= {(environment, seed) for (environment, seed, condition), success
                        in plays.items() if condition == "unhinted" and not success
                        and plays.get((environment, seed, "hinted"))}
        assert flipped, "the built-in players flip no seed on the example panel"
        self.page.goto(self.url(f"/panels/{panel.uuid}/"))
        self.page.click("text=Compare evaluations")
        for name in PLAYERS:
            self.page.check(f"#compare-choice label:has-text('{name}') input[name=e]")
        self.page.check("#compare-choice input[name=show][value=flipped]")
        self.page.click("#compare-choice button[type=submit]")
        self.page.wait_for_selector("#compare-grid")
        rows = self.page.locator("#compare-grid tbody tr")
        assert rows.count() == len(flipped)
        assert self.page.locator("#compare-grid thead th").all_inner_texts()[2:] == list(PLAYERS)
        first = self.page.locator("#compare-grid a.pair").first
        href = first.get_attribute("href")
        first.click()
        self.page.wait_for_url("**/compare/?a=*")
        unhinted, hinted = (Episode.objects.get(uuid=value.split("&")[0]) for value in
                            href.split("a=", 1)[1].split("&b="))
        assert (unhinted.condition, hinted.condition) == ("unhinted", "hinted")
        assert unhinted.seed == hinted.seed and unhinted.evaluation == hinted.evaluation
        # The two plays of the pair, side by side (these plays have no steps stored).
        assert self.page.locator(".compare-head").count() == 1
        assert self.page.locator("h1", has_text="Compare runs").count() == 1
