"""Failed htmx requests show their message next to the form that made them (one shared
mechanism in static/js/htmx-errors.js): validation 400s, the hourly 429, a 403, a lost network,
and styled error pages for whole-page errors."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from duels.models import Annotation, Duel, TargetKind
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class HtmxErrorsBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("erring", "erring-pass-123")
        self.user = get_user_model().objects.get(username="erring")

    def open_duel_form(self):
        self.first = factories.player(name="alpha")
        self.second = factories.player(name="beta")
        self.page.goto(self.url("/duels/new/"))
        self.page.wait_for_function("() => window.htmx !== undefined")

    def test_invalid_duel_form_shows_its_message_in_place(self):
        self.open_duel_form()
        self.page.select_option("#id_a", value=str(self.first.uuid))
        self.page.select_option("#id_b", value=str(self.first.uuid))
        self.page.click("#duel-form button[type=submit]")
        message = self.page.locator("#duel-form .alert.bad, #duel-form .error").first
        message.wait_for()
        assert "different" in self.page.inner_text("#duel-form").lower()
        assert self.page.url.endswith("/duels/new/")
        assert Duel.objects.count() == 0

    def test_hourly_limit_answer_is_shown(self):
        self.open_duel_form()
        for _ in range(30):
            Duel.objects.create(a=self.first, b=self.second, created_by=self.user)
        self.page.select_option("#id_a", value=str(self.first.uuid))
        self.page.select_option("#id_b", value=str(self.second.uuid))
        self.page.click("#duel-form button[type=submit]")
        alert = self.page.locator("#duel-form [role=alert]")
        alert.wait_for()
        assert "the limit is 30 per hour" in alert.inner_text()
        assert Duel.objects.count() == 30

    def test_network_failure_says_so(self):
        self.open_duel_form()
        self.page.route("**/duels/new/", lambda route: route.abort())
        self.page.select_option("#id_a", value=str(self.first.uuid))
        self.page.select_option("#id_b", value=str(self.second.uuid))
        self.page.click("#duel-form button[type=submit]")
        alert = self.page.locator("#duel-form [data-htmx-error]")
        alert.wait_for()
        assert "Could not reach the server" in alert.inner_text()
        assert "Nothing was saved" in alert.inner_text()
        # Back online, a good submit clears the message and goes on.
        self.page.unroute("**/duels/new/")
        self.page.click("#duel-form button[type=submit]")
        self.page.wait_for_url("**/duels/*-*/")
        assert Duel.objects.count() == 1

    def test_forbidden_edit_shows_the_reason(self):
        environment = factories.environment()
        note = Annotation.objects.create(
            target_kind=TargetKind.ENVIRONMENT, environment=environment, author=self.user,
            text="first thoughts",
        )
        self.page.goto(self.url(f"/environments/{environment.uuid}/"))
        self.page.click("#annotations .note-actions a:has-text('Edit')")
        self.page.wait_for_selector("#annotations h3:has-text('Edit your note')")
        # Meanwhile the note changes hands (an admin reassigned it): saving is refused.
        other = get_user_model().objects.create_user("someone-else", password="x-pass-12345")
        Annotation.objects.filter(pk=note.pk).update(author=other)
        self.page.fill("#annotations textarea[name=text]", "second thoughts")
        self.page.click("#annotations form.annotation-form button[type=submit]")
        alert = self.page.locator("#annotations form.annotation-form [data-htmx-error]")
        alert.wait_for()
        assert "Only the author of a note can edit it." in alert.inner_text()
        note.refresh_from_db()
        assert note.text == "first thoughts"

    def test_unknown_uuid_gets_a_styled_page_with_navigation(self):
        response = self.page.goto(
            self.url("/episodes/00000000-0000-0000-0000-000000000000/")
        )
        assert response.status == 404
        assert self.page.locator("h1").inner_text() == "Not found"
        assert self.page.locator("nav.nav a[href='/duels/']").is_visible()
