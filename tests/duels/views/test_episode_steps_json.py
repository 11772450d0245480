"""The replay fetches steps back by index range: /episodes/<uuid>/steps.json?from=N&count=C."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_returns_the_range_as_the_websocket_sends_it(owner_client, make):
    episode = make.episode(steps=120)
    body = owner_client.get(f"/episodes/{episode.uuid}/steps.json", {"from": 10, "count": 5})
    steps = body.json()["steps"]
    assert [step["index"] for step in steps] == [10, 11, 12, 13, 14]
    assert steps[0]["reply"].endswith("ACTION: 10") and "thinking" in steps[0]
    whole = owner_client.get(f"/episodes/{episode.uuid}/steps.json", {"count": 100}).json()
    assert len(whole["steps"]) == 100 and whole["steps"][0]["index"] == 0


def test_bad_ranges_answer_400_and_sign_in_is_needed(owner_client, client, make):
    episode = make.episode(steps=3)
    url = f"/episodes/{episode.uuid}/steps.json"
    assert owner_client.get(url, {"count": 1000}).status_code == 400
    assert owner_client.get(url, {"from": "x"}).status_code == 400
    client.logout()
    assert client.get(url).status_code == 302
