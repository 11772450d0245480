"""The home page (dashboard) costs the same number of queries with 3 players or 300."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


def home_queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get("/")
    assert response.status_code == 200
    return len(captured.captured_queries)


def test_home_page_lists_players_and_links_staff_to_the_admin(client, staff, make):
    make.player(name="alpha-model")
    client.force_login(staff)
    page = client.get("/").content.decode()
    assert "alpha-model" in page and "built-in (scripted)" in page
    assert "/admin/duels/player/add/" in page


def test_home_page_queries_do_not_grow_with_players(owner_client, make):
    for _ in range(3):
        make.player()
    with_three = home_queries(owner_client)
    for _ in range(297):
        make.player()
    with_three_hundred = home_queries(owner_client)
    assert with_three == with_three_hundred
    assert with_three <= 20


def test_latest_duels_show_running_duels_first(owner_client, make):
    """A demo that is still starting: one duel runs, ten newer ones wait. The README's
    "click a running duel" needs the running one in the list."""
    from duels.models import Duel, Status

    a, b = make.player(), make.player()
    running = Duel.objects.create(a=a, b=b, status=Status.RUNNING)
    for _ in range(10):
        Duel.objects.create(a=a, b=b, status=Status.PENDING)
    page = owner_client.get("/").content.decode()
    rows = page[page.index("Latest duels"):]
    links = [part.split('"')[0] for part in rows.split('href="/duels/')[1:]]
    duel_links = [link for link in links if len(link) > 30]
    assert duel_links[0] == f"{running.uuid}/"
    assert len(set(duel_links)) == 10
