"""One rule for which error text a reader may see: a real model call's error (HTTP 401 from a
loopback server whose reply names an internal host) is stored on a duel, its episode, its
setter call and its tournament; staff read it whole, and no other surface (duel, tournament and
replay pages, the API, the `episode.status` websocket message, a download, a published site)
shows the player's base URL or the server's reply."""

from __future__ import annotations

import asyncio
import json

import pytest

from duels.models import ModelCall, Status
from duels.players import PlayerError, player_client
from duels.words.error_text import HIDDEN_REPLY, error_for_reader
from tests.duels.players.loopback import (
    OPENAI_PATH,
    LoopbackServer,
    error_body,
    loopback_player,
    server_error,
)
from tests.duels.test_consumers import connect, receive_until

INTERNAL = "internal-gpu-7.corp"
REPLY = f"bad key for {INTERNAL}"
KEY = "sk-loopback-test-key-0123456789"


@pytest.fixture
def model_error(monkeypatch, settings, tmp_path) -> tuple[str, str]:
    """The error text of a real call answered 401, and the player's base URL."""
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", KEY)
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")
    with LoopbackServer() as server:
        server.script(server_error(401, body=json.dumps(error_body(OPENAI_PATH, 401, REPLY))))
        player = loopback_player(server, "openai", params={"max_retries": 0})
        with pytest.raises(PlayerError) as caught:
            player_client(player).complete([{"role": "user", "content": "hello"}])
    text = str(caught.value)
    assert player.base_url in text and INTERNAL in text  # the stored text is whole
    return text, player.base_url


@pytest.fixture
def failed_duel(make, model_error):
    text, base_url = model_error
    tournament = make.tournament(error=text)
    duel = make.finished_duel(attempts=1)
    duel.tournament = tournament
    duel.status, duel.error = Status.FAILED, text
    duel.save()
    episode = duel.episodes.order_by("pk").first()
    episode.status, episode.error, episode.end_reason = Status.FAILED, text, "infra_error"
    episode.save()
    duel.a.base_url = base_url
    duel.a.save()
    ModelCall.objects.create(duel=duel, player=duel.a, role="setter", error=text)
    return duel, episode, text, base_url


def leaks(body: str, base_url: str) -> list[str]:
    return [part for part in (base_url, INTERNAL, "127.0.0.1", REPLY) if part in body]


def test_the_rule_keeps_what_envduels_wrote_and_drops_the_server(model_error):
    text, base_url = model_error
    shown = error_for_reader(text, staff=False)
    assert "HTTP 401" in shown and HIDDEN_REPLY in shown and not leaks(shown, base_url)
    assert error_for_reader(text, staff=True) == text
    assert error_for_reader("ValueError: the door is locked: try the key", staff=False) == \
        "ValueError: the door is locked: try the key"


@pytest.mark.django_db
def test_no_page_api_or_download_shows_it_to_non_staff(failed_duel, client, owner, staff):
    duel, episode, text, base_url = failed_duel
    pages = [f"/duels/{duel.uuid}/", f"/tournaments/{duel.tournament.uuid}/",
             f"/episodes/{episode.uuid}/", f"/api/v1/duels/{duel.uuid}/",
             f"/api/v1/episodes/{episode.uuid}/", f"/api/v1/episodes/?duel={duel.uuid}",
             "/api/v1/duels/", f"/export/duels.jsonl?tournament={duel.tournament.uuid}",
             f"/episodes/{episode.uuid}/replay.html", f"/duels/{duel.uuid}/replay.html"]
    client.force_login(owner)
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert not leaks(body.decode(), base_url), page
    client.force_login(staff)
    for page in pages[:2] + pages[3:4]:
        assert text.split(":")[0] in client.get(page).content.decode()
    assert base_url in json.dumps(client.get(f"/api/v1/duels/{duel.uuid}/").json())


@pytest.mark.django_db
def test_a_published_site_does_not_show_it(failed_duel, tmp_path):
    from duels.publishing.writer import site_export

    duel, _, _, base_url = failed_duel
    site_export(tournament_uuids=[duel.tournament.uuid], out=tmp_path / "site")
    files = [path for path in (tmp_path / "site").rglob("*") if path.is_file()]
    assert files
    for path in files:
        assert not leaks(path.read_bytes().decode("utf-8", "replace"), base_url), path


@pytest.mark.django_db(transaction=True)
def test_the_websocket_status_shows_it_to_staff_only(failed_duel, owner, staff):
    _, episode, text, base_url = failed_duel

    async def final_status(user) -> dict:
        communicator = await connect(episode, user)
        _, _, final = await receive_until(communicator, status=True)
        await communicator.disconnect()
        return final

    shown = asyncio.run(final_status(owner))
    assert shown["error"] and not leaks(json.dumps(shown), base_url)
    whole = asyncio.run(final_status(staff))
    assert whole["error"] == text

