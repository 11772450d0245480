"""The replay download of the largest duel today's limits allow (52 MB stored) streams: a real
Daphne process grows by far less than the file, and a duel over the cap is refused with a
message naming the cap and the command that writes the file on the server instead."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection

from tests.duels.management.test_serve import free_port, wait_until_up
from tests.helpers.big_duel import (
    CHUNKS_PER_OBSERVATION,
    EPISODES,
    STEPS,
    big_duel_create,
    big_duel_delete,
)
from tests.helpers.web_server import memory_kib, web_server_start

ROOT = Path(__file__).resolve().parents[3]
GROWTH_LIMIT_BYTES = 300 * 2**20


@pytest.fixture(scope="module")
def big_duel(django_db_setup, django_db_blocker):
    """The 52 MB duel and a signed-in session, committed so a server process sees them."""
    with django_db_blocker.unblock():
        duel = big_duel_create()
        user = get_user_model().objects.create_user("reader", password="reader-pass-123")
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        session["_auth_user_hash"] = user.get_session_auth_hash()
        session.create()
        yield duel, session.session_key
        big_duel_delete(duel)
        user.delete()


def _get(url: str, session_key: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={session_key}"})
    with urllib.request.urlopen(request, timeout=300) as response:
        chunks = []
        while chunk := response.read(1 << 20):
            chunks.append(chunk)
        return response.status, b"".join(chunks)


@pytest.mark.slow
@pytest.mark.django_db
def test_a_52_mb_duel_streams_without_growing_the_server(big_duel):
    duel, session_key = big_duel
    if connection.vendor != "sqlite":
        pytest.skip("the server process shares the SQLite test database file")
    port = free_port()
    server = web_server_start(port)
    try:
        site = f"http://127.0.0.1:{port}"
        wait_until_up(f"{site}/healthz", time.monotonic() + 60)
        small = duel.episodes.order_by("pk").first()
        # A first download loads the code and templates the big one uses.
        assert _get(f"{site}/episodes/{small.uuid}/replay.html", session_key)[0] == 200
        before = memory_kib(server.pid, "VmRSS")
        started = time.monotonic()
        status, body = _get(f"{site}/duels/{duel.uuid}/replay.html", session_key)
        seconds = time.monotonic() - started
        growth = (memory_kib(server.pid, "VmHWM") - before) * 1024
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    print(f"replay of {len(body):,} bytes in {seconds:.1f} s; server grew {growth / 2**20:.0f} MB")
    assert status == 200, errors.decode()[-2000:]
    assert growth < GROWTH_LIMIT_BYTES
    # Only what must be escaped is: the file is about as large as the stored text.
    assert len(body) < 1.2 * EPISODES * STEPS * CHUNKS_PER_OBSERVATION * 200
    found = re.search(rb'<script id="replay-data" type="application/json">(.*?)</script>', body,
                      re.S)
    bundle = json.loads(found.group(1))
    assert [len(record["steps"]) for record in bundle["episodes"]] == [STEPS] * EPISODES
    assert bundle["episodes"][0]["steps"][5]["observation"].startswith("<" * 199 + " <")


@pytest.mark.django_db
def test_a_duel_over_the_cap_is_refused_with_the_way_to_write_it(big_duel, client, settings):
    duel, session_key = big_duel
    settings.ENVDUELS_REPLAY_MAX_MB = 10
    client.cookies["sessionid"] = session_key
    response = client.get(f"/duels/{duel.uuid}/replay.html")
    assert response.status_code == 400
    text = response.content.decode()
    assert "10 MB" in text and "ENVDUELS_REPLAY_MAX_MB" in text
    assert f"manage.py export --format html --duel {duel.uuid}" in text
