"""The environment card and the review queue in Chromium: the card leads with the hint gain and
each solver's pass rates; a note on lines 16–18 of a 40-line environment highlights exactly those
lines, sits in the gutter beside them, and every gutter row lines up with its code row; the
review queue shows pass rates, highlighted source and a visible confirmation."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from duels.models import Annotation, TargetKind
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FORTY_LINES = "class Environment:\n    max_steps = 5\n" + "".join(
    f"    value_{n} = {n}  # {'a rather long comment that runs on ' * 3}\n" for n in range(3, 41)
)


class EnvironmentBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("reader", "reader-pass-123")

    def test_note_on_lines_16_to_18_highlights_exactly_them_with_the_gutter_aligned(self):
        duel = factories.finished_duel()
        environment = duel.env_a
        environment.source = FORTY_LINES
        environment.save()
        assert FORTY_LINES.count("\n") == 40
        Annotation.objects.create(
            target_kind=TargetKind.ENVIRONMENT, environment=environment, line_start=16,
            line_end=18, text="off by one in the counter",
            author=get_user_model().objects.get(username="reader"),
        )
        self.page.goto(self.url(f"/environments/{environment.uuid}/?lines=16-18#line-16"))
        marked = self.page.locator(".source-lines tr.marked").evaluate_all(
            "rows => rows.map(row => row.id)"
        )
        assert marked == ["line-16", "line-17", "line-18"]
        noted = self.page.locator(".source-lines tr.noted").evaluate_all(
            "rows => rows.map(row => row.id)"
        )
        assert noted == ["line-16", "line-17", "line-18"]
        gutter = self.page.locator("#line-16 .gutter-note")
        assert "off by one in the counter" in gutter.inner_text()
        # Every line is its own row: number, code and notes share its top and height. Long lines
        # wrap (so notes stay beside them), so a row may be taller than one line, but its number
        # sits on its first visual line and the next line starts below it.
        rows = self.page.locator(".source-lines tr").evaluate_all(
            """rows => rows.map(row => {
                const [number, code, notes] = ['.ln', '.code', '.gutter-notes'].map(
                    s => row.querySelector(s).getBoundingClientRect());
                const link = row.querySelector('.ln a').getBoundingClientRect();
                const text = row.querySelector('.code code').getClientRects()[0];
                return {n: row.querySelector('.ln').innerText.trim(), top: number.top,
                        bottom: number.bottom, codeTop: code.top, notesTop: notes.top,
                        h: number.height, codeH: code.height, notesH: notes.height,
                        linkTop: link.top, linkH: link.height, textTop: text.top};
            })"""
        )
        assert [row["n"] for row in rows] == [str(n) for n in range(1, 41)]
        line_height = min(row["h"] for row in rows)
        for row in rows:
            assert abs(row["top"] - row["codeTop"]) < 1 and abs(row["h"] - row["codeH"]) < 1
            assert abs(row["top"] - row["notesTop"]) < 1 and abs(row["h"] - row["notesH"]) < 1
            assert abs(row["linkTop"] - row["textTop"]) < 2, row  # number beside its first line
            assert row["linkH"] < 1.5 * line_height, row  # a line number never wraps
        for previous, row in zip(rows, rows[1:], strict=False):
            assert row["top"] >= previous["bottom"] - 1  # never two lines on one row
        overflow = self.page.evaluate(
            "() => document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 0
        # The card leads with the hint gain and the solver's rates by condition.
        card = self.page.locator("#environment-card")
        assert "+100 pp" in card.inner_text()
        solver_row = card.locator("tbody tr").first
        assert duel.b.name in solver_row.inner_text()
        assert "0%" in solver_row.inner_text() and "100%" in solver_row.inner_text()

    def test_lists_tell_same_titled_environments_apart(self):
        first = factories.environment(title="Maze")
        second = factories.environment(title="Maze", source=factories.TRIVIAL_SOURCE + "\n# v2\n")
        self.page.goto(self.url("/environments/"))
        shown = " ".join(self.page.locator("#environment-results tbody tr").all_inner_texts())
        assert first.content_hash[:6] in shown and second.content_hash[:6] in shown
        assert first.content_hash[:6] != second.content_hash[:6]

    def test_review_queue_shows_rates_source_and_confirms_the_save(self):
        duel = factories.finished_duel()
        self.page.goto(self.url(f"/annotate/?author={duel.a.name}"))
        item = self.page.locator("#review-item")
        assert "+100 pp" in item.locator("#environment-card").inner_text()
        assert item.locator(".source-lines .highlight span.k").count() > 0  # highlighted
        self.page.check("[data-shortcut='1'] input")
        self.page.click("#review-save")
        status = self.page.locator(".messages[role=status]")
        status.wait_for()
        assert f"Saved your note on {duel.env_a.title}" in status.inner_text()
