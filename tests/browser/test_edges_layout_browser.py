"""What a daily user saw cut or overlapping, at a phone's 390×844 and a laptop's 1366×768: the
setter-vs-solver chart's two rankings, Plotly's toolbar over a chart's top, the agreement
table's last column, the source squeezed by its notes gutter, and a published copy's header
cutting tournament names."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from duels.models import Annotation
from duels.publishing import site_export
from duels.services.analytics import analytics_refresh
from duels.services.answers import answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 768}
LONG_NAME = "Spring league of the long tournament names, 2026 edition"

OVERLAPS = """([first, second]) => {
  const a = first.getBoundingClientRect(), b = second.getBoundingClientRect();
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}"""


class EdgesLayoutBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.staff = get_user_model().objects.create_user(
            "edges-staff", password="browser-pass-123", is_staff=True, is_superuser=True)
        players = [factories.player(name=name) for name in
                   ("ada-the-long-named-player", "bob-the-solver", "cy-setter-model", "dee")]
        self.tournament = factories.tournament(players=players, name=LONG_NAME)
        self.duels = [factories.finished_duel(a=a, b=b, tournament=self.tournament)
                      for i, a in enumerate(players) for b in players[i + 1:]]
        self.environment = self.duels[0].env_a
        Annotation.objects.create(
            target_kind="environment", environment=self.environment, author=self.staff,
            text="The reset forgets the seed, so the same seed gives another puzzle.",
            line_start=3, line_end=5)
        self.queue = queue_create(user=self.staff, name="review", rubric=rubric_default(),
                                  selection=QueueSelection(), annotators=[self.staff])
        answer_save(user=self.staff, queue=self.queue, index=0,
                    values={"labels": ["elegant"], "rating": 4})
        analytics_refresh(resamples=20)

    def open(self, viewport: dict, path: str) -> None:
        self.page.set_viewport_size(viewport)
        self.sign_in("edges-staff", create=False)
        self.page.goto(self.url(path))

    def test_phone_charts_keep_their_rankings_apart_and_no_toolbar_covers_them(self):
        self.open(PHONE, "/analytics/")
        chart = self.page.locator(".js-chart[data-figure=setter-solver]")
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for()
        chart.click()  # a tap shows Plotly's toolbar where it is enabled
        names = chart.locator(".yaxislayer-above .y2tick text")
        assert names.count() >= 2
        first_panel = chart.locator(".cartesianlayer .subplot.xy .gridlayer").first
        plot = chart.locator(".draglayer .xy .nsewdrag").first
        for index in range(names.count()):
            assert not self.page.evaluate(OVERLAPS, [names.nth(index).element_handle(),
                                                     plot.element_handle()])
        assert first_panel.count() == 1
        assert self.page.locator(".js-chart .modebar").count() == 0

    def test_phone_agreement_table_and_source_fit_the_screen(self):
        self.open(PHONE, f"/annotate/queues/{self.queue.uuid}/results/")
        card = self.page.locator("#agreement").bounding_box()
        cells = self.page.locator("#agreement td").evaluate_all(
            "cells => cells.map((cell) => cell.getBoundingClientRect().right)")
        assert cells and max(cells) <= card["x"] + card["width"] + 0.5
        # Each cell says which column it is, now that the row is a block.
        named = self.page.locator("#agreement td.small").first.evaluate(
            "(cell) => getComputedStyle(cell, '::before').content")
        assert "each annotator agrees with the others" in named
        self.page.goto(self.url(f"/environments/{self.environment.uuid}/"))
        row = self.page.locator("#environment-source tr#line-3")
        code = row.locator("td.code").bounding_box()["width"]
        whole = self.page.locator("#environment-source table").bounding_box()["width"]
        assert code >= 0.7 * whole
        assert row.locator(".gutter-note").is_visible()  # the marker stays, with its lines

    def test_laptop_published_header_shows_whole_tournament_names(self):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "site"
            site_export(tournament_uuids=[self.tournament.uuid], out=out)
            self.page.set_viewport_size(LAPTOP)
            self.page.goto((out / "index.html").as_uri())
            names = self.page.locator(".nav a").all_inner_texts()
            assert LONG_NAME in names
            cut = self.page.evaluate(
                "() => [...document.querySelectorAll('.topbar *')]"
                ".filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.outerHTML)")
            assert cut == []
            assert self.page.locator(".site-stamp").inner_text().startswith("published copy · ")

    def test_laptop_new_queue_form_puts_each_annotator_box_beside_its_name(self):
        self.open(LAPTOP, "/annotate/queues/new/")
        # How far each name's text sits from its box: across, and off its line.
        gaps = self.page.locator("#queue-annotators label.tag-choice").evaluate_all(
            """labels => labels.map((label) => {
                 const box = label.querySelector('input').getBoundingClientRect();
                 const name = [...label.childNodes]
                   .find((n) => n.nodeType === 3 && n.textContent.trim());
                 const range = document.createRange();
                 range.selectNodeContents(name);
                 const text = range.getBoundingClientRect();
                 const across = Math.max(text.left - box.right, box.left - text.right, 0);
                 const off = Math.abs((text.top + text.bottom) / 2 - (box.top + box.bottom) / 2);
                 return [across, off];
               })""")
        assert gaps and max(across for across, _ in gaps) < 24, gaps
        assert max(off for _, off in gaps) < 6, gaps  # on the same line

    def test_laptop_verdicts_are_written_one_way(self):
        self.open(LAPTOP, "/analytics/")
        verdicts = set(self.page.locator(".finding .verdict").all_inner_texts())
        assert verdicts and verdicts <= {"Not enough data", "Supported", "Contradicted"}
        glance = set(self.page.locator(".glance-verdict").all_inner_texts())
        assert glance <= {"Not enough data", "Supported", "Contradicted"}
