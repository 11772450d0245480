"""Each finding's card and its line in "Findings at a glance" come from one computation: on the
analytics page they show the same verdict, figure, interval and n, on a planted tournament and
on the demo tournament's data."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

from duels.analytics.compute import analytics_compute
from duels.analytics.data import AnalyticsInput
from duels.analytics.findings import NOT_ENOUGH
from duels.models import AnalyticsSnapshot
from tests.helpers.planted import planted_duels, player_name

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).parents[2] / "fixtures" / "demo_tournament.jsonl"
LINE = re.compile(r'<span class="finding-line" data-finding="([a-z_]+)">(.*?)</span>\s*</',
                  re.DOTALL)


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def shown_findings(page: str) -> dict[str, dict[str, list[str]]]:
    """Per finding: the verdicts and figure lines the card and the at-a-glance row show."""
    shown: dict[str, dict[str, list[str]]] = {}
    for pattern in (r'id="finding-([a-z_]+)">(.*?)</article>',  # the cards
                    r'id="glance-([a-z_]+)">(.*?)</tr>'):  # the at-a-glance rows
        for finding_id, block in re.findall(pattern, page, re.DOTALL):
            verdict = re.search(r"<strong[^>]*>(.*?)</strong>", block, re.DOTALL).group(1)
            lines = [_text(line) for _, line in LINE.findall(block + "</")]
            entry = shown.setdefault(finding_id, {"verdict": [], "line": []})
            entry["verdict"].append(_text(verdict).lower())
            entry["line"].extend(lines)
    return shown


def assert_card_and_glance_agree(page: str, findings: list[dict]) -> None:
    shown = shown_findings(page)
    assert list(shown) == [finding["id"] for finding in findings]
    for finding in findings:
        entry = shown[finding["id"]]
        assert entry["verdict"] == [finding["verdict"]] * 2, finding["id"]
        assert len(entry["line"]) == 2 and entry["line"][0] == entry["line"][1], entry
        assert f"n = {finding['n']} " in entry["line"][0]


def store_snapshot(data: dict) -> None:
    AnalyticsSnapshot.objects.create(data=data, duration_ms=1, fingerprint="planted")


def test_card_and_glance_agree_on_a_planted_tournament(owner_client):
    planted = planted_duels(np.random.default_rng(7), players=8, rounds=6, attempts=4)
    data = analytics_compute(AnalyticsInput(
        players=tuple(player_name(i) for i in range(8)), duels=tuple(planted.duels),
        episodes=tuple(planted.episodes), environments=tuple(planted.environments),
    ), resamples=200)
    store_snapshot(data)
    page = owner_client.get("/analytics/").content.decode()
    assert_card_and_glance_agree(page, data["findings"])
    # Eight players all set and solved: the first finding counts them.
    first = data["findings"][0]
    assert first["n"] == 8 and first["figure"]["value"] is not None


def test_card_and_glance_agree_on_the_demo_tournament(owner_client):
    from duels.exchange.importer import exchange_import
    from duels.services.analytics import analytics_refresh

    with DEMO.open("rb") as handle:
        exchange_import(stream=handle)
    data = analytics_refresh(resamples=200).data
    page = owner_client.get("/analytics/").content.decode()
    assert_card_and_glance_agree(page, data["findings"])
    # All five demo players both set and solved in its 20 duels: never "n = 0" beside a
    # ranking correlation shown for the same question.
    first = data["findings"][0]
    assert first["n"] == 5
    assert first["verdict"] != NOT_ENOUGH or first["needs"].startswith("more duels")
