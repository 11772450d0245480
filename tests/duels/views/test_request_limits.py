"""Per-user rate limits (429 with Retry-After), the time limit on every query a page makes
(503 asking to narrow the search, never a 500), staff-only player fields (in the API and in
downloads) and one status for /metrics refusals."""

from __future__ import annotations

import io
import json
from unittest import mock

import pytest
from django.db import connection

from duels.models import TokenScope
from duels.services.api_tokens import api_token_create
from tests.helpers.postgres import fresh_postgres_database, postgres_shell

pytestmark = pytest.mark.django_db


def bearer(user, scope: str = TokenScope.READ) -> dict:
    _, raw = api_token_create(user=user, name="script", scope=scope)
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def test_the_30th_search_in_a_minute_gets_429_with_retry_after(owner_client, make):
    episode = make.episode(steps=2)
    statuses = [owner_client.get("/duels/search/", {"q": f"word{n}"}).status_code
                for n in range(29)]
    assert 429 not in statuses[:20]
    refused = owner_client.get("/duels/search/", {"q": "word29"})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "at most 20 a minute" in refused.content.decode()
    # Every search shares the allowance: the episode's find and the duel list's filter too.
    found = owner_client.get(f"/episodes/{episode.uuid}/search.json", {"q": "no"})
    assert found.status_code == 429 and "Try again in" in found.json()["error"]
    assert owner_client.get("/duels/", {"q": "salt"}).status_code == 429
    assert owner_client.get("/duels/").status_code == 200  # no search, no limit


def test_another_user_keeps_their_own_allowance(owner_client, client, teammate, settings):
    settings.ENVDUELS_SEARCH_RATE_PER_MINUTE = 2
    for _ in range(2):
        assert owner_client.get("/duels/search/", {"q": "salt"}).status_code == 200
    assert owner_client.get("/duels/search/", {"q": "salt"}).status_code == 429
    client.force_login(teammate)
    assert client.get("/duels/search/", {"q": "salt"}).status_code == 200


def test_the_api_is_rate_limited_per_user(client, owner, settings):
    settings.ENVDUELS_API_RATE_PER_MINUTE = 5
    headers = bearer(owner)
    statuses = [client.get("/api/v1/players/", **headers).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    refused = client.get("/api/v1/players/", **headers)
    assert "ENVDUELS_API_RATE_PER_MINUTE" in refused.json()["error"]
    assert int(refused["Retry-After"]) >= 1


def test_a_non_staff_token_sees_no_base_url_or_params(client, owner, staff, make):
    player = make.player(base_url="http://gpu-box.internal:8000/v1", params={"top_k": 5})
    for url in ("/api/v1/players/", f"/api/v1/players/{player.uuid}/"):
        text = client.get(url, **bearer(owner)).content.decode()
        assert "gpu-box.internal" not in text and "base_url" not in text
        assert "top_k" not in text
        staff_view = client.get(url, **bearer(staff)).content.decode()
        assert "gpu-box.internal" in staff_view and "top_k" in staff_view
    client.force_login(owner)
    assert "gpu-box.internal" not in client.get(f"/players/{player.uuid}/").content.decode()



def test_a_non_staff_download_carries_blank_servers_and_imports_back(client, owner, staff, make):
    from duels.exchange.importer import exchange_import

    player = make.player(base_url="http://gpu-box.internal:8000/v1", params={"top_k": 5})
    make.finished_duel(a=player)
    for url in ("/export/duels.jsonl", "/export/environments.jsonl"):
        client.force_login(owner)
        text = b"".join(client.get(url).streaming_content).decode()
        assert "gpu-box.internal" not in text and "top_k" not in text
        mine = next(json.loads(line) for line in text.splitlines()
                    if f'"uuid": "{player.uuid}"' in line)
        assert (mine["base_url"], mine["params"]) == ("", {})
        client.force_login(staff)
        staff_text = b"".join(client.get(url).streaming_content).decode()
        assert "gpu-box.internal" in staff_text and "top_k" in staff_text
    exchange_import(stream=io.BytesIO(text.encode()))  # back in here: the blanks keep ours
    player.refresh_from_db()
    assert (player.base_url, player.params) == ("http://gpu-box.internal:8000/v1", {"top_k": 5})

def test_metrics_refusals_share_one_status(client, owner, staff):
    refusals = {
        "anonymous": client.get("/metrics"),
        "unknown token": client.get("/metrics", HTTP_AUTHORIZATION="Bearer edt_nonsense"),
        "non-staff token": client.get("/metrics", **bearer(owner, TokenScope.OPERATE)),
        "staff read token": client.get("/metrics", **bearer(staff)),
    }
    client.force_login(owner)
    refusals["non-staff session"] = client.get("/metrics")
    assert {name: r.status_code for name, r in refusals.items()} == dict.fromkeys(refusals, 403)
    assert "--scope operate" in refusals["staff read token"].content.decode()
    client.logout()
    assert client.get("/metrics", **bearer(staff, TokenScope.OPERATE)).status_code == 200


SLOW_SQL = {
    "sqlite": ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
               "WHERE x < 1000000000) SELECT count(*) FROM c"),
    "postgresql": "SELECT pg_sleep(30)",
}


def slow_list(**kwargs):
    """The duel list's selector, as if its query took 30 s or more."""
    from django.db import connection as current

    with current.cursor() as cursor:
        cursor.execute(SLOW_SQL[current.vendor])
        cursor.fetchall()
    return []


def query_limit_outcome(client) -> dict:
    """A page whose query would run for 30 s, with a 300 ms limit; then the same page as
    usual (the connection still works)."""
    import time

    from django.test import override_settings

    with override_settings(ENVDUELS_QUERY_TIMEOUT_MS=300), \
            mock.patch("duels.views.duels_pages.duel_list", slow_list):
        started = time.monotonic()
        stopped = client.get("/duels/")
        seconds = time.monotonic() - started
    return {"status": stopped.status_code, "seconds": seconds,
            "text": stopped.content.decode(), "after": client.get("/duels/").status_code}


def check_query_limit(outcome: dict) -> None:
    assert outcome["status"] == 503
    assert outcome["seconds"] < 5
    assert "Narrow the search" in outcome["text"] and "ENVDUELS_QUERY_TIMEOUT_MS" in outcome["text"]
    assert outcome["after"] == 200


def test_a_query_past_the_time_limit_asks_to_narrow_the_search_on_sqlite(owner_client):
    if connection.vendor != "sqlite":
        pytest.skip("the PostgreSQL test runs in its own database")
    check_query_limit(query_limit_outcome(owner_client))


ON_POSTGRES = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from tests.duels.views.test_request_limits import query_limit_outcome
client = Client()
client.force_login(get_user_model().objects.create_user("reader"))
print(json.dumps(query_limit_outcome(client)))
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_a_query_past_the_time_limit_asks_to_narrow_the_search_on_postgresql():
    with fresh_postgres_database(migrated=True) as url:
        output = postgres_shell(url, ON_POSTGRES, env={"DJANGO_ALLOWED_HOSTS": "testserver"})
    check_query_limit(json.loads(output.strip().splitlines()[-1]))
