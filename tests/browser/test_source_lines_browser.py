"""Chromium chooses source lines for a note by dragging and by shift-click, sees the note
saved, and finds it beside the same lines on another copy of the design."""

from __future__ import annotations

import pytest

from duels.models import Annotation
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class SourceLinesBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("noter", "noter-pass-123")

    def drag(self, view: str, first: int, last: int) -> None:
        self.page.locator(f"{view} tr#line-{last}").scroll_into_view_if_needed()
        start = self.page.locator(f"{view} tr#line-{first} td.ln").bounding_box()
        end = self.page.locator(f"{view} tr#line-{last} td.ln").bounding_box()
        self.page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
        self.page.mouse.down()
        self.page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)
        self.page.mouse.up()

    def test_drag_selects_lines_and_the_note_shows_on_another_copy(self):
        original = factories.environment(title="Original copy")
        copy = factories.environment(title="Second copy", source=original.source)
        page = self.page
        page.goto(self.url(f"/environments/{original.uuid}/"))
        page.wait_for_selector("#annotations input[name=line_start]")
        self.drag("#environment-source", 3, 6)
        selected = page.locator("#environment-source tr.selected").evaluate_all(
            "rows => rows.map(row => row.id)")
        assert selected == ["line-3", "line-4", "line-5", "line-6"]
        assert page.input_value("#annotations input[name=line_start]") == "3"
        assert page.input_value("#annotations input[name=line_end]") == "6"
        page.fill("#annotations textarea[name=text]", "The reset forgets the seed.")
        page.click("#annotations button[type=submit]")
        page.wait_for_selector("#note-saved")
        assert page.inner_text("#note-saved") == "Saved your note."
        note = Annotation.objects.get()
        assert (note.environment, note.line_start, note.line_end) == (original, 3, 6)
        # Beside the lines at once, without a reload.
        page.wait_for_selector("#environment-source tr#line-3 .gutter-note")
        assert "The reset forgets the seed." in page.inner_text(
            "#environment-source tr#line-3 .gutter-note")
        assert "noted" in page.get_attribute("#environment-source tr#line-6", "class")

        page.goto(self.url(f"/environments/{copy.uuid}/"))
        noted = page.locator("#environment-source tr.noted").evaluate_all(
            "rows => rows.map(row => row.id)")
        assert noted == ["line-3", "line-4", "line-5", "line-6"]
        assert "The reset forgets the seed." in page.inner_text(
            "#environment-source tr#line-3 .gutter-note")

    def test_click_then_shift_click_selects_a_range(self):
        environment = factories.environment(title="Shift click")
        page = self.page
        page.goto(self.url(f"/environments/{environment.uuid}/annotations/"))
        page.click("#annotated-source tr#line-2 td.ln")
        page.click("#annotated-source tr#line-5 td.ln", modifiers=["Shift"])
        assert page.input_value("input[name=line_start]") == "2"
        assert page.input_value("input[name=line_end]") == "5"
        assert page.locator("#annotated-source tr.selected").count() == 4
        # Choosing lines does not jump away from the form.
        assert "#line" not in page.url

    def test_the_review_queue_save_key_is_readable_on_its_button(self):
        factories.environment(title="Queue item")
        page = self.page
        page.goto(self.url("/annotate/"))
        key = page.evaluate("""() => {
            const kbd = getComputedStyle(document.querySelector('#review-save kbd'));
            const button = getComputedStyle(document.querySelector('#review-save'));
            return [kbd.color, kbd.backgroundColor, button.color, button.backgroundColor];
        }""")
        kbd_color, kbd_background, button_color, button_background = key
        # The key takes the button's own text colour on the button's own (dark) background.
        assert kbd_color == button_color == "rgb(255, 255, 255)"
        assert kbd_background == "rgba(0, 0, 0, 0)"
        assert button_background != "rgb(255, 255, 255)"

    def test_a_long_note_is_folded_and_opens_whole(self):
        environment = factories.environment(title="Long notes")
        from django.contrib.auth import get_user_model

        writer = get_user_model().objects.create_user("essayist")
        text = "\n".join(f"Paragraph {n}: " + "words " * 30 for n in range(60))
        Annotation.objects.create(target_kind="environment", environment=environment,
                                  author=writer, text=text[:10_000])
        page = self.page
        page.goto(self.url(f"/environments/{environment.uuid}/"))
        page.wait_for_selector("#annotations details.note-long")
        folded = page.locator("#annotations details.note-long").bounding_box()["height"]
        assert folded < 200
        assert "show the whole note (10,000 characters)" in page.inner_text("#annotations")
        assert "Paragraph 59" not in page.inner_text("#annotations")
        page.click("#annotations details.note-long summary")
        assert "Paragraph 40" in page.inner_text("#annotations details.note-long")
