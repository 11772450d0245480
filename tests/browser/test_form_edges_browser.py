"""Form edges in Chromium, on a desktop and on a phone: the new-study form's player checkboxes
sit beside their labels, the episode list's study dropdown fits its card at 390 px, and the top
navigation links the panels."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from duels.models import Study
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class FormEdgesBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        call_command("seed_builtin", verbosity=0)
        self.sign_in("former", "former-pass-123")

    def checkboxes_beside_labels(self) -> None:
        self.page.goto(self.url("/studies/new/"))
        boxes = self.page.locator("#id_players input[type=checkbox]")
        assert boxes.count() >= 3
        for index in range(boxes.count()):
            box = boxes.nth(index).bounding_box()
            label = boxes.nth(index).locator("xpath=..").bounding_box()
            # On the label's line, at its left edge, the size of a checkbox (not a full row).
            assert box["width"] < 40 and label["y"] <= box["y"] + box["height"] / 2 <= (
                label["y"] + label["height"]), (box, label)
            assert abs(box["x"] - label["x"]) < 12, (box, label)
            assert label["height"] < 2.5 * box["height"], (box, label)

    def test_checkboxes_beside_labels_on_a_desktop_and_a_phone(self):
        self.page.set_viewport_size({"width": 1366, "height": 900})
        self.checkboxes_beside_labels()
        self.page.set_viewport_size({"width": 390, "height": 844})
        self.checkboxes_beside_labels()

    def test_the_study_dropdown_fits_its_card_on_a_phone_and_panels_are_in_the_nav(self):
        Study.objects.create(name="a study with a long name " * 6, per_author=1, seeds=1)
        self.page.goto(self.url("/episodes/"))
        assert self.page.locator("nav.nav a[href='/panels/']").count() == 1
        self.page.set_viewport_size({"width": 390, "height": 844})
        self.page.goto(self.url("/episodes/"))
        card = self.page.locator("form.filters").first.bounding_box()
        select = self.page.locator("form.filters select[name=study]").bounding_box()
        assert select["x"] + select["width"] <= card["x"] + card["width"] + 0.5, (select, card)
        overflow = self.page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
