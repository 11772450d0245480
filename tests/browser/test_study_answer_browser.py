"""The study's answer in Chromium, on the demo study (run for real: built-in players, sandbox)
and on a planted study: the card names the leaders of the primary figures, its "different"
share equals a count over the resamples done here, its sentence is made of the card's own
numbers, equal figures share a rank, and the card stays within a 390 px screen."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from duels.management.commands.demo_study import (
    DEMO_DOMAINS,
    DEMO_HARDEN,
    DEMO_PER_AUTHOR,
    DEMO_SEEDS,
)
from duels.models import Study
from duels.studies.figures import field_figures
from duels.studies.results import (
    RESAMPLES,
    study_failed_slots,
    study_field_rows,
    study_figures_refresh,
)
from sandbox_runner import available_backends
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need
from tests.helpers.studies import builtin_players, study_run
from tests.helpers.study_data import played_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PRIMARY = {"solver": "canonical_autonomous_solve", "setter": "design"}
# Planted: alpha solves best (passes beta's and gamma's versions); beta's versions alone part
# the field (alpha and gamma pass them, delta fails), the others' pass or fail everyone.
ABILITY = {"alpha": 3.0, "beta": 0.0, "gamma": 2.0, "delta": 1.0}
DIFFICULTY = {"alpha": 10.0, "beta": 1.5, "gamma": -10.0, "delta": 10.0}


def planted(author, revision, solver, seed, hinted):
    return hinted or ABILITY[solver] > DIFFICULTY[author]


def leaders(rows: list[dict], figure: str) -> list[str]:
    values = {row["model"]: row[figure] for row in rows if row[figure] is not None}
    top = max(values.values())
    return sorted(name for name, value in values.items() if abs(value - top) < 1e-12)


def resampled_different_share(study: Study) -> float | None:
    """Count, over the same resamples the figures used, those in which no model leads both
    canonical solve and design."""
    rows = study_field_rows(study=study)
    figures = field_figures(versions=rows.versions, plays=rows.plays, models=rows.models,
                            resamples=RESAMPLES, failed_slots=study_failed_slots(study=study),
                            parts=("models",), keep_draws=True)
    names = [model.name for model in rows.models]
    different = counted = 0
    for solvers, setters in zip(figures["draws"][PRIMARY["solver"]],
                                figures["draws"][PRIMARY["setter"]], strict=True):
        def top(values):
            finite = [(float(f"{v:.12g}"), names[m]) for m, v in enumerate(values)
                      if v == v]  # NaN is undefined
            best = max((v for v, _ in finite), default=None)
            return {name for v, name in finite if v == best}

        first, second = top(solvers), top(setters)
        if first and second:
            counted += 1
            different += not (first & second)
    return different / counted if counted else None


class StudyAnswerBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.sign_in("researcher", "researcher-pass-123")

    def read_card(self) -> dict:
        card = {}
        for role in ("solver", "setter"):
            box = self.page.locator(f"#study-answer [data-role={role}]")
            card[role] = {
                "model": box.locator(".headline-model").inner_text().strip(),
                "value": box.locator(".headline-value").inner_text().strip(),
                "interval": box.locator(".headline-interval").inner_text().strip(),
                "rank": box.locator(".headline-rank").inner_text().strip(),
            }
        card["different"] = self.page.locator("#headline-different").inner_text()
        card["sentence"] = self.page.locator("#headline-sentence").inner_text()
        return card

    def check_answer(self, study: Study) -> dict:
        figures = Study.objects.get(pk=study.pk).figures
        self.page.goto(self.url(f"/studies/{study.uuid}/"))
        card = self.read_card()
        for role, figure in PRIMARY.items():
            names = leaders(figures["models"], figure)
            assert card[role]["model"] == names[0], (role, card, names)
            value = max(row[figure] for row in figures["models"] if row[figure] is not None)
            assert card[role]["value"] == f"{value:.2f}"
            # The sentence is made of the card's own numbers.
            interval = card[role]["interval"].removeprefix("95% ")
            verb = "solves" if role == "solver" else "sets"
            label = "canonical solve" if role == "solver" else "design"
            assert (f"{verb} best by {label}, {card[role]['value']} {interval}, "
                    f"{card[role]['rank']}") in card["sentence"], (card, role)
        share = resampled_different_share(study)
        assert share is not None
        assert f"{share:.0%} of resamples" in card["different"]
        assert f"in {share:.0%} of resamples" in card["sentence"]
        # Equal figures share a rank in the solvers' table.
        for table, figure in (("solvers", PRIMARY["solver"]), ("setters", PRIMARY["setter"])):
            cells = self.page.locator(f"#{table}-table tbody tr").all()
            seen: dict[str, set[str]] = {}
            for row in cells:
                value = row.locator(f"td[data-figure={figure}]").inner_text().split(" ")[0]
                rank = row.locator("td.rank").first.inner_text()
                seen.setdefault(value, set()).add(rank)
            assert all(len(ranks) == 1 for ranks in seen.values()), (table, seen)
        # A phone's width: the card wraps within it.
        self.page.set_viewport_size({"width": 390, "height": 800})
        width = self.page.evaluate(
            "document.querySelector('#study-answer').getBoundingClientRect().right")
        assert width <= 390, width
        return card

    def test_the_planted_study_answers_with_its_planted_leaders(self):
        from axe_playwright_python.sync_playwright import Axe

        study = played_study(names=tuple(ABILITY), results=planted)
        study_figures_refresh(study=study)
        card = self.check_answer(study)
        assert card["solver"]["model"] == "alpha" and card["setter"]["model"] == "beta"
        assert re.search(r"\d+% of resamples", card["different"])
        # The card and the role tables pass axe with no serious or critical violation.
        self.page.set_viewport_size({"width": 1280, "height": 900})
        violations = [violation["id"] for violation in Axe().run(self.page).response["violations"]
                      if violation.get("impact") in {"serious", "critical"}]
        assert violations == []

    def test_the_demo_study_answers_from_its_own_numbers(self):
        backends = available_backends()
        need(bool(backends), "no sandbox backend (docker, bwrap, unshare) works here")
        with override_settings(ENVDUELS_SANDBOX="bwrap" if "bwrap" in backends else backends[0],
                               ENVDUELS_BUILTIN_LATENCY_MS=0, ENVDUELS_INFRA_BACKOFF_SECONDS=0):
            study = study_run(players=builtin_players(), per_author=DEMO_PER_AUTHOR,
                              seeds=DEMO_SEEDS, harden_rounds=DEMO_HARDEN, domains=DEMO_DOMAINS)
        study_figures_refresh(study=study)
        self.check_answer(study)
