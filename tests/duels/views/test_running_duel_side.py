"""A running duel's side whose plays are all done: its counts without an interval beside a dash,
and a reason that says it waits for the duel to end, not that plays are missing."""

from __future__ import annotations

import re

import pytest

from duels.models import Duel, Status
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_done_side_of_a_running_duel_shows_no_interval_beside_a_dash(owner_client):
    duel = factories.finished_duel()
    Duel.objects.filter(pk=duel.pk).update(
        status=Status.RUNNING, outcome=None, finished_at=None,
        **{f"{name}_{side}": None for side in ("a", "b")
           for name in ("p_unhinted", "p_hinted", "setter_score", "flips")})
    page = owner_client.get(f"/duels/{duel.uuid}/").content.decode()
    figures = re.findall(r"<dd>(.*?)</dd>\s*<dd class=\"small muted\">(.*?)</dd>", page, re.S)
    assert figures, "no pass-rate figures on the page"
    for shown, detail in figures:
        if shown.strip() == "—":
            assert "%" not in detail and "[" not in detail, detail
    assert "has played every seed in both conditions; both sides are scored together" in page
    assert "has not finished both conditions" not in page
