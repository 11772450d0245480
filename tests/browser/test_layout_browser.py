"""Layout at a laptop's 1366 px and a phone's 390 px: the signed-in navigation stays on one line
at 1366 px, and table headers never break a word in the middle ("Validit|y")."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Words of every table header that end up on more than one line box.
BROKEN_WORDS = """() => {
  const broken = [];
  document.querySelectorAll('.table th').forEach((th) => {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const pattern = /\\S+/g;
      let match;
      while ((match = pattern.exec(node.textContent))) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        if (range.getClientRects().length > 1) broken.push(match[0]);
      }
    }
  });
  return broken;
}"""


class LayoutBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        get_user_model().objects.create_user(
            "layout-staff", password="browser-pass-123", is_staff=True, is_superuser=True)
        for _ in range(2):
            factories.finished_duel()

    def open_as_staff(self, width: int, path: str) -> None:
        self.page.set_viewport_size({"width": width, "height": 900})
        self.sign_in("layout-staff", create=False)
        self.page.goto(self.url(path))

    def test_signed_in_navigation_fits_one_line_at_1366(self):
        self.open_as_staff(1366, "/environments/")
        tops = self.page.evaluate(
            "() => [...new Set([...document.querySelectorAll('.nav a')]"
            ".map((a) => Math.round(a.getBoundingClientRect().top)))]")
        assert len(tops) == 1
        assert self.page.locator(".nav a", has_text="Glossary").is_visible()
        assert self.page.locator(".nav a", has_text="Workers").is_visible()

    def test_table_headers_keep_their_words_whole(self):
        for width in (1366, 390):
            for path in ("/environments/", "/duels/", "/players/"):
                self.open_as_staff(width, path)
                assert self.page.locator(".table th").count() > 0, path
                assert self.page.evaluate(BROKEN_WORDS) == [], (width, path)
            # Nothing pushes the page itself sideways: wide tables scroll inside their card.
            assert self.page.evaluate(
                "() => document.scrollingElement.scrollWidth") <= width + 1
