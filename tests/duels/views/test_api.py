"""Read API under /api/v1/: auth, pagination, filters, constant queries, no secrets."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from duels.models import AnalyticsSnapshot, ApiToken, Provider
from duels.services.annotations import AnnotationInput, annotation_create
from duels.services.api_tokens import api_token_create

pytestmark = pytest.mark.django_db


def api(name: str, *args) -> str:
    return reverse(f"duels:api:{name}", args=args)


def test_anonymous_gets_401_json(client):
    response = client.get(api("duels"))
    assert response.status_code == 401
    assert "Bearer" in response["WWW-Authenticate"]
    assert "authentication required" in response.json()["error"]
    bad = client.get(api("duels"), HTTP_AUTHORIZATION="Bearer edt_wrong")
    assert bad.status_code == 401


def test_bearer_token_works_and_records_use(client, owner):
    token, raw = api_token_create(user=owner, name="ci")
    response = client.get(api("index"), HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    assert set(response.json()["endpoints"]) >= {"players", "duels", "episodes", "analytics"}
    token.refresh_from_db()
    assert token.last_used_at is not None
    ApiToken.objects.all().delete()
    assert client.get(api("index"), HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_players_show_key_variable_never_key(owner_client, make, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    make.player(name="claude", provider=Provider.ANTHROPIC, model="claude-x",
                api_key_env="ANTHROPIC_API_KEY")
    response = owner_client.get(api("players"))
    assert "sk-ant-very-secret" not in response.content.decode()
    (player,) = response.json()["results"]
    assert player["api_key_env"] == "ANTHROPIC_API_KEY"
    detail = owner_client.get(api("player", player["uuid"])).json()
    assert detail["name"] == "claude"


def test_duels_paginate_and_filter(owner_client, make):
    first = make.finished_duel()
    for _ in range(4):
        make.finished_duel(a=first.a)
    make.finished_duel()
    page = owner_client.get(api("duels") + f"?player={first.a.name}&page_size=2&page=2").json()
    assert (page["count"], page["num_pages"], page["page"]) == (5, 3, 2)
    assert len(page["results"]) == 2 and page["next"] and page["previous"]
    assert owner_client.get(api("duels") + "?outcome=b").json()["count"] == 0
    duel = owner_client.get(api("duel", first.uuid)).json()
    assert duel["outcome"] == "a" and duel["sides"]["a"]["setter_score"] == 1.0
    assert len(duel["episodes"]) == 8
    assert owner_client.get(api("duels") + "?page_size=abc").status_code == 400
    # Out of range answers 400 with the allowed range, never a silent cut or an empty 404.
    past = owner_client.get(api("duels") + "?page_size=2&page=99")
    assert past.status_code == 400
    assert "page must be between 1 and 3" in past.json()["error"]
    too_big = owner_client.get(api("duels") + "?page_size=201")
    assert too_big.status_code == 400
    assert "page_size must be between 1 and 200" in too_big.json()["error"]
    assert owner_client.get(api("duels") + "?page_size=200").json()["page_size"] == 200
    steps = owner_client.get(api("episode", duel["episodes"][0]["uuid"]) + "?page_size=51")
    assert steps.status_code == 400 and "between 1 and 50" in steps.json()["error"]


def test_episodes_filters_and_steps(owner_client, make):
    duel = make.finished_duel()
    url = api("episodes") + f"?duel={duel.uuid}&condition=hinted&success=yes"
    hinted_passes = owner_client.get(url).json()
    assert hinted_passes["count"] == 3
    solver = owner_client.get(api("episodes") + f"?solver={duel.b.name}").json()
    assert solver["count"] == 4
    episode = make.episode(steps=5)
    detail = owner_client.get(api("episode", episode.uuid) + "?page_size=4").json()
    assert detail["trajectory"]["count"] == 6
    assert [s["index"] for s in detail["trajectory"]["results"]] == [0, 1, 2, 3]
    assert owner_client.get(api("episodes") + "?duel=nope").status_code == 400
    assert owner_client.get(api("episode", duel.uuid)).status_code == 404


def test_environments_and_annotations(owner_client, owner, make):
    environment = make.environment()
    make.hint(environment=environment)
    annotation_create(author=owner, environment=environment,
                      data=AnnotationInput(tags=("elegant",), text="<script>x</script>"))
    listing = owner_client.get(api("environments") + "?tag=elegant").json()
    assert [e["uuid"] for e in listing["results"]] == [str(environment.uuid)]
    assert "source" in owner_client.get(api("environment", environment.uuid)).json()
    notes = owner_client.get(api("annotations") + f"?environment={environment.uuid}").json()
    assert notes["results"][0]["text"] == "<script>x</script>"
    assert notes["results"][0]["author"] == "owner"


def test_analytics_are_computed_on_first_read_then_served_with_their_freshness(
    owner_client, make
):
    first = owner_client.get(api("analytics")).json()
    assert first["computed_at"] and first["stale"] is False
    assert len(first["findings"]) == 5 and first["ratings"] == []
    # A finished duel after the snapshot: the old figures are served, marked stale, and a
    # background refresh is queued.
    make.finished_duel()
    later = owner_client.get(api("analytics")).json()
    assert later["computed_at"] == first["computed_at"] and later["stale"] is True
    assert AnalyticsSnapshot.objects.count() == 1


@pytest.mark.parametrize("name", ["players", "environments", "duels", "episodes", "annotations"])
def test_constant_queries_per_page(owner_client, owner, make, name):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert owner_client.get(api(name)).status_code == 200
        return len(queries)

    def grow() -> None:
        duel = make.finished_duel()
        make.hint(environment=duel.env_a)
        annotation_create(author=owner, environment=duel.env_a, data=AnnotationInput(text="n"))
        annotation_create(author=owner, episode=duel.episodes.first(), data=AnnotationInput(
            text="e"))

    grow()
    small = count()
    for _ in range(4):
        grow()
    assert count() == small
