"""Read API: every filter answers 400 with the allowed values; token problems say what is wrong."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from duels.services.api_tokens import api_token_create

pytestmark = pytest.mark.django_db


def api(name: str) -> str:
    return reverse(f"duels:api:{name}")


@pytest.mark.parametrize(
    ("endpoint", "query", "expected"),
    [
        ("duels", "status=bogus", "status must be one of: pending, running, finished, failed, "
                                  "cancelled (got 'bogus')"),
        ("duels", "outcome=c", "outcome must be one of: a, b, draw"),
        ("duels", "tournament=nope", "tournament must be a uuid"),
        ("episodes", "success=maybe", "success must be one of: yes, true, 1, no, false, 0"),
        ("episodes", "status=done", "status must be one of: pending, running"),
        ("episodes", "condition=both", "condition must be one of: unhinted, hinted"),
        ("environments", "status=broken", "status must be one of: pending, valid, invalid"),
        ("annotations", "target_kind=duel", "target_kind must be one of: environment, episode, "
                                            "step"),
        ("duels", "stauts=finished", "unknown parameter 'stauts'; this list accepts: player, "
                                     "tournament, status, outcome, tag, page, page_size"),
        ("players", "name=x", "unknown parameter 'name'"),
    ],
)
def test_bad_filters_answer_400_with_the_allowed_values(owner_client, endpoint, query, expected):
    response = owner_client.get(f"{api(endpoint)}?{query}")
    assert response.status_code == 400
    assert expected in response.json()["error"]


def test_good_filters_still_filter(owner_client, make):
    duel = make.finished_duel()
    listing = owner_client.get(api("duels") + f"?status=finished&tournament=&player={duel.a.name}")
    assert listing.status_code == 200
    assert listing.json()["count"] == 1
    assert owner_client.get(api("duels") + "?status=running").json()["count"] == 0
    assert owner_client.get(api("episodes") + "?success=no&condition=unhinted").status_code == 200


def test_missing_wrong_and_revoked_tokens_get_different_messages(client, owner):
    missing = client.get(api("duels"))
    assert missing.status_code == 401
    assert missing.json()["error"].startswith("authentication required")

    wrong = client.get(api("duels"), HTTP_AUTHORIZATION="Bearer edt_wrong")
    assert wrong.status_code == 401
    assert wrong.json()["error"].startswith("invalid token")

    token, raw = api_token_create(user=owner, name="laptop")
    assert client.get(api("duels"), HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    call_command("api_token", "revoke", str(token.pk), stdout=None)
    revoked = client.get(api("duels"), HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert revoked.status_code == 401
    assert revoked.json()["error"].startswith("invalid token: it is unknown or was revoked")

    other_scheme = client.get(api("duels"), HTTP_AUTHORIZATION="Basic b3duZXI6cHc=")
    assert "unsupported authorization scheme 'Basic'" in other_scheme.json()["error"]
