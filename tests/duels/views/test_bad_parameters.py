"""Bounded work per request: ranges clamp to the data, malformed parameters answer 400."""

from __future__ import annotations

import pytest
from django.urls import reverse

from duels.bounds import API_TEXT_CHARS, text_is_cut
from duels.models import Step

pytestmark = pytest.mark.django_db


def test_a_huge_line_range_is_clamped_to_the_source(owner_client, make):
    environment = make.environment()
    lines = environment.source.count("\n") + 1
    response = owner_client.get(f"/environments/{environment.uuid}/?lines=1-3000000")
    assert response.status_code == 200
    assert f"Lines 1–{lines} marked" in response.text  # not 1–3000000
    far = owner_client.get(f"/environments/{environment.uuid}/?lines={'9' * 5000}")
    assert far.status_code == 200 and f"Lines {lines}–{lines} marked" in far.text


@pytest.mark.parametrize("value", ["abc", "3-", "1-x", "²"])
def test_a_malformed_line_range_is_a_400_with_a_message(owner_client, make, value):
    environment = make.environment()
    response = owner_client.get(f"/environments/{environment.uuid}/", {"lines": value})
    assert response.status_code == 400
    assert "lines must be a line number or a range such as 12-20" in response.text


def test_a_non_uuid_solver_on_compare_is_a_400(owner_client, make):
    episode = make.episode(steps=1)
    response = owner_client.get(f"/episodes/{episode.uuid}/compare/?solver=not-a-uuid")
    assert response.status_code == 400
    assert "solver must be a uuid" in response.text
    huge_seed = owner_client.get(f"/episodes/{episode.uuid}/compare/?seed={10**21}")
    assert huge_seed.status_code == 400 and "seed must be between" in huge_seed.text


def test_a_bad_environment_on_the_review_queue_is_a_400(owner_client):
    response = owner_client.post("/annotate/", {"environment": "nope", "text": "x"})
    assert response.status_code == 400
    assert "environment must be a uuid" in response.text


def test_a_step_index_of_ten_to_the_21_is_a_400(owner_client, make):
    episode = make.episode(steps=2)
    response = owner_client.get(f"/episodes/{episode.uuid}/annotations/?step={10**21}")
    assert response.status_code == 400
    assert "step must be between 0 and" in response.text
    missing = owner_client.post(f"/episodes/{episode.uuid}/annotations/?step=5", {"text": "x"})
    assert missing.status_code == 400 and "step must be between 0 and 2" in missing.text
    replay = owner_client.get(f"/episodes/{episode.uuid}/?from={10**21}")
    assert replay.status_code == 400 and "from must be between" in replay.text
    past_the_end = owner_client.get(f"/episodes/{episode.uuid}/?from=999999")
    assert past_the_end.status_code == 200


def test_api_numbers_are_checked_and_step_pages_bounded(owner_client, make):
    url = reverse("duels:api:duels")
    for bad in (str(10**21), "²", "9" * 5000):
        response = owner_client.get(url, {"page": bad})
        assert response.status_code == 400 and "page must be" in response.json()["error"]
    episode = make.episode(steps=60)
    Step.objects.filter(episode=episode, index=1).update(reply="r" * 500_000)
    too_many = owner_client.get(
        reverse("duels:api:episode", args=[episode.uuid]), {"page_size": 1000})
    assert too_many.status_code == 400
    assert "page_size must be between 1 and 50" in too_many.json()["error"]
    detail = owner_client.get(reverse("duels:api:episode", args=[episode.uuid])).json()
    assert detail["trajectory"]["page_size"] == 50
    reply = detail["trajectory"]["results"][1]["reply"]
    assert len(reply) <= API_TEXT_CHARS and text_is_cut(reply)
