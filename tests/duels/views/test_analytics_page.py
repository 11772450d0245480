from __future__ import annotations

import csv
import io
import json

import pytest
from django_tasks_db.models import DBTaskResult

from duels.services.analytics import analytics_refresh

pytestmark = pytest.mark.django_db


def with_data(make) -> None:
    players = [make.player(name=f"p{i}") for i in range(3)]
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            make.finished_duel(a=a, b=b, unhinted_b=(True, True), hinted_b=(True, True))
    analytics_refresh()


def test_empty_database_shows_not_enough_duels_yet(owner_client):
    response = owner_client.get("/analytics/")
    assert response.status_code == 200
    assert b"Not enough duels yet" in response.content
    assert b"plotly" not in response.content


def test_snapshot_without_duels_shows_the_empty_state_and_time(owner_client):
    analytics_refresh()
    response = owner_client.get("/analytics/")
    assert b"Not enough duels yet" in response.content
    assert b"Figures computed at" in response.content


def test_page_reads_the_snapshot_and_draws_from_a_data_island(make, owner_client,
                                                              django_assert_max_num_queries):
    with_data(make)
    # The session and its user, whether they may start duels (the nav's button), then the
    # page's own reads.
    with django_assert_max_num_queries(7):
        response = owner_client.get("/analytics/")
    content = response.content.decode()
    assert "Figures computed at" in content
    assert 'id="analytics-figures"' in content
    assert "vendor/plotly/plotly-cartesian.min.js" in content
    island_tag = '<script id="analytics-figures" type="application/json">'
    assert "<script>" not in content.replace(island_tag, "")
    for slug in ("ratings", "head-to-head-wins", "head-to-head-duels", "setter-solver",
                 "hint-gain"):
        assert f'data-figure="{slug}"' in content
        assert f"/analytics/{slug}.csv" in content


def test_untrusted_names_are_escaped(make, owner_client):
    a = make.player(name="<img src=x onerror=alert(1)>")
    make.finished_duel(a=a)
    analytics_refresh()
    content = owner_client.get("/analytics/").content.decode()
    assert "<img src=x" not in content
    island = content.split('type="application/json">')[1].split("</script>")[0]
    assert "<img" not in island and json.loads(island)["ratings"]["data"]


def test_csv_download_has_the_numbers_behind_the_chart(make, owner_client):
    with_data(make)
    response = owner_client.get("/analytics/ratings.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["rank", "player", "rating", "low", "high", "duels"]
    assert [row[1] for row in rows[1:]] == ["p0", "p1", "p2"]
    assert owner_client.get("/analytics/nope.csv").status_code == 404


def test_recompute_needs_a_signed_in_user(client):
    response = client.post("/analytics/recompute/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not DBTaskResult.objects.exists()


@pytest.mark.parametrize(
    "url", ["/analytics/", "/analytics/status/", "/analytics/ratings.csv", "/analytics/nope.csv"]
)
def test_the_page_and_its_downloads_need_sign_in(client, make, url):
    with_data(make)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_recompute_enqueues_one_task(owner_client):
    response = owner_client.post("/analytics/recompute/")
    assert response.status_code == 302
    assert DBTaskResult.objects.count() == 1
    assert b"a recomputation is queued" in owner_client.get("/analytics/").content
    assert owner_client.get("/analytics/recompute/").status_code == 405
