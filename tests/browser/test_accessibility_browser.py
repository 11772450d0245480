"""Every page passes axe-core (axe-playwright-python) with no serious or critical violation, and
the replay's controls are reachable with the keyboard alone."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from duels.models import Annotation, Status, TargetKind
from tests import factories
from tests.helpers.browser import BrowserTestCase

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BLOCKING = {"serious", "critical"}


class AccessibilityBrowserTest(BrowserTestCase):
    def violations(self) -> list[str]:
        from axe_playwright_python.sync_playwright import Axe

        results = Axe().run(self.page)
        found = []
        for violation in results.response["violations"]:
            if violation.get("impact") in BLOCKING:
                targets = [node["target"] for node in violation["nodes"]][:3]
                found.append(f"{violation['id']} ({violation['impact']}): {targets}")
        return found

    def check(self, path: str, *, ready: str | None = None) -> list[str]:
        self.page.goto(self.url(path))
        if ready:
            self.page.wait_for_selector(ready)
        return [f"{path}: {problem}" for problem in self.violations()]

    def test_every_page_has_no_serious_or_critical_violation(self):
        duel = factories.finished_duel()
        tournament = factories.tournament(players=[duel.a, duel.b], status=Status.FINISHED,
                                          duels_total=1, duels_done=1)
        duel.tournament = tournament
        duel.save()
        episode = duel.episodes.filter(condition="hinted").first()
        staff = get_user_model().objects.create_user(
            "auditor", password="auditor-pass-123", is_staff=True
        )
        Annotation.objects.create(target_kind=TargetKind.ENVIRONMENT, environment=duel.env_a,
                                  author=staff, text="tidy", tags=["elegant"], line_start=2,
                                  line_end=3)
        from duels.services.analytics import analytics_refresh

        analytics_refresh(resamples=50)  # the analytics page with its charts and tables
        problems = self.check("/")  # the signed-out landing page
        problems += self.check("/accounts/login/")
        problems += self.check("/glossary/")
        self.sign_in("auditor", "auditor-pass-123", create=False)
        pages = [
            "/", "/players/", f"/players/{duel.a.uuid}/", "/environments/",
            f"/environments/{duel.env_a.uuid}/?lines=2-3", "/duels/", f"/duels/{duel.uuid}/",
            "/duels/new/", f"/episodes/{episode.uuid}/compare/", "/compare/",
            f"/compare/?a={episode.uuid}", "/tournaments/", f"/tournaments/{tournament.uuid}/",
            "/analytics/", "/annotate/", "/glossary/", "/export/", "/import/",
            f"/environments/{duel.env_a.uuid}/annotations/",
            f"/episodes/{episode.uuid}/annotations/?step=1",
            "/duels/00000000-0000-0000-0000-000000000000/",
            f"/episodes/{episode.uuid}/steps/1/call/", "/duels/search/?q=number",
        ]
        for path in pages:
            problems += self.check(path)
        problems += self.check(f"/episodes/{episode.uuid}/", ready=".transcript-row")
        assert problems == [], "\n".join(problems)

    def test_study_and_panel_pages_have_no_serious_or_critical_violation(self):
        """The studies list, a panel imported from a hand-written export with its snapshot, its
        compare page with nothing chosen and an unknown panel's 404."""
        import io
        import tempfile
        from pathlib import Path

        from django.core.management import call_command

        from duels.models import Panel
        from tests.duels.panels.handmade import write_export, write_snapshot
        from tests.duels.trainers.test_rl_gymnasium import sandbox_works
        from tests.helpers.parts import need

        need(sandbox_works(), "no sandbox backend works here")
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write_export(root / "export")
            write_snapshot(root / "snapshot", root / "export")
            call_command("import", str(root / "export"), "--name", "original",
                         stdout=io.StringIO())
            call_command("import", str(root / "snapshot"), "--panel", "original",
                         stdout=io.StringIO())
        panel = Panel.objects.get()
        self.sign_in("panel-auditor")
        problems = []
        for path in ("/studies/", "/panels/", f"/panels/{panel.uuid}/",
                     f"/panels/{panel.uuid}/compare/",
                     "/panels/00000000-0000-0000-0000-000000000000/"):
            problems += self.check(path)
        assert problems == [], "\n".join(problems)

    def test_replay_controls_are_reachable_by_keyboard(self):
        episode = factories.episode(steps=5, success=True)
        self.sign_in("tabber", "tabber-pass-123")
        self.page.goto(self.url(f"/episodes/{episode.uuid}/"))
        self.page.wait_for_selector(".transcript-row")
        reached = set()
        for _ in range(60):
            self.page.keyboard.press("Tab")
            reached.add(self.page.evaluate(
                """() => {
                    const node = document.activeElement;
                    return node.dataset.action || node.dataset.control || node.dataset.role
                        || node.className || node.tagName;
                }"""
            ))
        for control in ("first", "back", "play", "forward", "last", "speed", "follow", "scrub",
                        "transcript", "row-index", "row-note"):
            assert control in reached, f"{control} not reachable with Tab: {sorted(reached)}"
        # A focused button works with the keyboard too.
        self.page.focus("[data-action=last]")
        self.page.keyboard.press("Enter")
        self.page.wait_for_function(
            "() => document.querySelector('[data-role=position]').textContent === 'step 5 of 5'"
        )
