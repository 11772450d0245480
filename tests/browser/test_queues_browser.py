"""Chromium works annotation queues: two annotators finish an overlap-2 queue with the keyboard,
staff read alpha with its interval and settle a disagreement, a pairwise queue ranks designs
beside their hint gain. Live Daphne server, Playwright."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

from duels.models import Adjudication, Answer
from duels.services.analytics import analytics_refresh
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_create, rubric_default
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTIONS = [
    {"key": "broken", "kind": "yesno", "prompt": "Is the design broken?"},
    {"key": "quality", "kind": "scale", "prompt": "Quality", "scale_max": 4},
]


class QueueBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        users = get_user_model().objects
        self.staff = users.create_user("lead", password="lead-pass-123", is_staff=True)
        self.ann = users.create_user("ann", password="ann-pass-123")
        self.bob = users.create_user("bob", password="bob-pass-123")

    def page_of(self, username: str):
        """A signed-in page of its own (a separate browser context) for `username`."""
        context = self.browser.new_context(viewport=self.viewport)
        self.addCleanup(context.close)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(self.url("/accounts/login/?next=/"))
        page.fill("#id_username", username)
        page.fill("#id_password", f"{username}-pass-123")
        page.click("button[type=submit]")
        page.wait_for_url(self.url("/"))
        return page

    def answer_with_keys(self, page, *, broken: str, quality: str) -> None:
        """Answer the current item from the keyboard: y/n, j to the next question, a digit, s."""
        item = page.get_attribute("#queue-item", "data-item")
        page.keyboard.press(broken)
        page.keyboard.press("j")
        page.keyboard.press(quality)
        page.keyboard.press("s")
        page.wait_for_url(re.compile(rf".*\?after={item}$"))

    def test_two_annotators_finish_an_overlap_two_queue_and_staff_settle_a_disagreement(self):
        designs = [factories.environment(title=f"Design {n}") for n in range(5)]
        for environment in designs:
            factories.hint(environment=environment)
        rubric = rubric_create(user=self.staff, name="Check", questions=QUESTIONS)
        queue = queue_create(user=self.staff, name="Overlap two", rubric=rubric,
                             selection=QueueSelection(), annotators=[self.ann, self.bob],
                             overlap=2)
        work = self.url(f"/annotate/queues/{queue.uuid}/")
        # Ann and Bob agree on two designs and disagree on whether the first served is broken.
        plans = {"ann": [("y", "1"), ("n", "3"), ("n", "4"), ("n", "2"), ("y", "3")],
                 "bob": [("n", "2"), ("n", "3"), ("n", "4"), ("n", "1"), ("y", "4")]}
        for name, plan in plans.items():
            page = self.page_of(name)
            page.goto(work)
            # The design's hint and source stand beside the form.
            assert "The number is the seed modulo three." in page.inner_text("#design-left")
            assert page.locator("#design-left .source-view tr").count() > 5
            for broken, quality in plan:
                self.answer_with_keys(page, broken=broken, quality=quality)
            page.wait_for_selector("#queue-done")
            assert "Nothing left for you in this queue" in page.inner_text("#queue-done")
        assert Answer.objects.filter(queue=queue).count() == 10
        first = queue.designs[0]
        values = dict(Answer.objects.filter(queue=queue, design=first).values_list(
            "annotator__username", "values"))
        assert values == {"ann": {"broken": True, "quality": 1},
                          "bob": {"broken": False, "quality": 2}}

        lead = self.page_of("lead")
        lead.goto(self.url(f"/annotate/queues/{queue.uuid}/results/"))
        assert lead.inner_text("#items-complete") == "5/5"
        row = lead.locator(".agreement-row[data-question='quality']")
        alpha = float(row.locator(".alpha").inner_text())
        low, high = (float(x) for x in re.findall(r"-?\d+\.\d+",
                                                  row.locator(".alpha-interval").inner_text()))
        assert low <= alpha <= high
        disputed = lead.locator(f".disputed[data-design='{first}']")
        assert "ann — yes" in disputed.inner_text() and "bob — no" in disputed.inner_text()
        form = disputed.locator(".disputed-question[data-question='broken'] form")
        form.locator("select[name=value]").select_option("yes")
        form.locator("button[type=submit]").click()
        lead.wait_for_selector(f".disputed[data-design='{first}'] .settled-value")
        assert "Settled: yes by lead" in lead.inner_text(f".disputed[data-design='{first}']")
        assert Adjudication.objects.get(queue=queue, design=first).value is True

    def test_a_pairwise_queue_ranks_designs_beside_their_hint_gain(self):
        players = [factories.player(name=f"setter-{n}") for n in range(4)]
        # Four designs with different hint gains: their duels give the measured figures.
        for n, (a, b) in enumerate(((0, 1), (2, 3))):
            factories.finished_duel(a=players[a], b=players[b],
                                    unhinted_a=(False, False), hinted_a=(True, n == 0),
                                    unhinted_b=(True, False), hinted_b=(True, True))
        analytics_refresh(resamples=20)
        queue = queue_create(user=self.staff, name="Which is better", rubric=rubric_default(),
                             selection=QueueSelection(), annotators=[self.ann, self.bob],
                             overlap=2, kind="pairwise", pair_question="rating")
        for name in ("ann", "bob"):
            page = self.page_of(name)
            page.goto(self.url(f"/annotate/queues/{queue.uuid}/"))
            assert page.locator("#design-left").count() == 1
            assert page.locator("#design-right").count() == 1
            for _ in range(len(queue.pairs)):
                item = page.get_attribute("#queue-item", "data-item")
                left = page.inner_text("#design-left h2")
                right = page.inner_text("#design-right h2")
                # Prefer the design whose title sorts first; a tie now and then.
                page.keyboard.press("a" if left < right else "b")
                page.keyboard.press("s")
                page.wait_for_url(re.compile(rf".*\?after={item}$"))
            page.wait_for_selector("#queue-done")
        lead = self.page_of("lead")
        lead.goto(self.url(f"/annotate/queues/{queue.uuid}/results/"))
        rows = lead.locator("#ranking .ranking-row")
        assert rows.count() == 4
        for index in range(4):
            row = rows.nth(index)
            rating = float(row.locator(".rating").inner_text())
            low, high = (float(x) for x in re.findall(
                r"-?\d+", row.locator(".rating-interval").inner_text()))
            assert low <= rating <= high
            assert re.search(r"[−+-]?\d+ pp|0 pp", row.locator(".hint-gain").inner_text())
        assert "Spearman ρ" in lead.inner_text("#ranking-correlation")


class QueuePagesAccessibilityBrowserTest(BrowserTestCase):
    def test_queue_pages_have_no_serious_or_critical_violation(self):
        from axe_playwright_python.sync_playwright import Axe

        from tests.browser.test_accessibility_browser import BLOCKING

        staff = get_user_model().objects.create_user("lead", password="lead-pass-123",
                                                     is_staff=True)
        for _ in range(3):
            factories.hint(environment=factories.environment())
        single = queue_create(user=staff, name="Single", rubric=rubric_default(),
                              selection=QueueSelection(), annotators=[staff])
        pairwise = queue_create(user=staff, name="Pairs", rubric=rubric_default(),
                                selection=QueueSelection(), annotators=[staff],
                                kind="pairwise", pair_question="rating")
        self.sign_in("lead", "lead-pass-123", create=False)
        problems = []
        for path in ("/annotate/queues/", "/annotate/queues/new/", "/annotate/rubrics/new/",
                     f"/annotate/queues/{single.uuid}/", f"/annotate/queues/{pairwise.uuid}/",
                     f"/annotate/queues/{single.uuid}/results/",
                     f"/annotate/queues/{pairwise.uuid}/results/"):
            self.page.goto(self.url(path))
            for violation in Axe().run(self.page).response["violations"]:
                if violation.get("impact") in BLOCKING:
                    targets = [node["target"] for node in violation["nodes"]][:3]
                    problems.append(f"{path}: {violation['id']} ({violation['impact']}): "
                                    f"{targets}")
        assert not problems, "\n".join(problems)
