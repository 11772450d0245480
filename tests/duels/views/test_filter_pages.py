"""List pages answer a bad filter with a 400 naming the allowed values, like the API."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/duels/?status=bogus", "status must be one of: pending, running, finished, failed, "
                                 "cancelled (got &#x27;bogus&#x27;)"),
        ("/duels/?outcome=zz", "outcome must be one of: won, lost, draw, a, b"),
        ("/duels/?tournament=nope", "tournament: Enter a valid UUID."),
        ("/environments/?status=bogus", "status must be one of: pending, valid, invalid"),
    ],
)
def test_a_bad_filter_is_a_400_naming_the_allowed_values(owner_client, url, expected):
    response = owner_client.get(url)
    assert response.status_code == 400
    text = response.content.decode()
    assert "These filters were not applied" in text
    assert expected in text


def test_the_htmx_swap_carries_the_message_in_its_own_target(owner_client):
    response = owner_client.get("/duels/?status=bogus", HTTP_HX_REQUEST="true",
                                HTTP_HX_TARGET="duel-results")
    assert response.status_code == 400
    text = response.content.decode()
    assert text.lstrip().startswith('<section class="card" id="duel-results">')
    assert "status must be one of" in text


def test_good_filters_answer_200_without_a_message(owner_client, make):
    make.finished_duel()
    response = owner_client.get("/duels/?status=finished")
    assert response.status_code == 200
    assert "These filters were not applied" not in response.content.decode()
    assert owner_client.get("/environments/?status=valid").status_code == 200
