"""The duel form shows, before a duel starts, whether each chosen player can be called here and
how its last check went, offers a check, and refuses a player that cannot be called."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from duels.models import Duel, ModelCall
from duels.tasks import player_check_task
from tests.duels.management.test_player_check import saved_player
from tests.duels.players.loopback import LoopbackServer, reply, server_error

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def server(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-duel-form-check-12345678")
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")
    with LoopbackServer() as running:
        yield running


def state(page: str, player) -> str:
    return re.search(rf'data-player="{player.uuid}" data-state="(\w+)"', page).group(1)


def test_the_form_shows_each_player_s_readiness_and_offers_a_check(owner_client, make, server):
    builtin = make.player(name="builtin-x")
    remote = saved_player(make, server, "openai", name="gateway", params={"actions": "text"})
    keyless = make.player(name="claude-ish", provider="anthropic", model="m",
                          api_key_env="MISSING_TEST_API_KEY")
    page = owner_client.get(reverse("duels:duel_new"),
                            {"a": builtin.uuid, "b": remote.uuid}).content.decode()
    assert state(page, builtin) == "builtin" and "plays offline" in page
    assert state(page, remote) == "unchecked" and "Check gateway now" in page
    assert 'hx-get="/duels/new/checks/"' in page  # choosing a player refreshes the panel

    panel = owner_client.get(reverse("duels:duel_player_checks"),
                             {"a": builtin.uuid, "b": keyless.uuid}).content.decode()
    assert state(panel, keyless) == "cannot"
    assert "MISSING_TEST_API_KEY is not set" in panel

    # A check runs in the background; the panel says so and asks again until it is answered.
    asked = owner_client.post(reverse("duels:player_check", args=[remote.uuid]),
                              {"a": builtin.uuid, "b": remote.uuid}, **HTMX).content.decode()
    assert "Checking… the answer appears here." in asked and 'hx-trigger="every 1s"' in asked
    since = re.search(r"since=([^\"&]+)", asked).group(1)
    server.script(reply("ACTION: ready"))
    assert player_check_task.func(player_uuid=str(remote.uuid)) is True
    answered = owner_client.get(
        reverse("duels:duel_player_checks"),
        {"a": builtin.uuid, "b": remote.uuid, "waiting": remote.uuid,
         "since": timezone.now().replace(year=2000).isoformat()}).content.decode()
    assert state(answered, remote) == "ok" and "Last check answered" in answered
    assert "every 1s" not in answered and since

    server.script(server_error(500))
    ModelCall.objects.filter(player=remote).update(created_at=timezone.now().replace(year=2001))
    remote.params = {"actions": "text", "max_retries": 0}
    remote.save()
    player_check_task.func(player_uuid=str(remote.uuid))
    failed = owner_client.get(reverse("duels:duel_new"),
                              {"a": builtin.uuid, "b": remote.uuid}).content.decode()
    assert state(failed, remote) == "failed" and "Last check failed" in failed


def test_a_duel_with_a_player_that_cannot_be_called_is_refused_before_it_starts(owner_client,
                                                                                  make):
    builtin = make.player(name="builtin-y")
    keyless = make.player(name="keyless", provider="anthropic", model="m",
                          api_key_env="MISSING_TEST_API_KEY")
    response = owner_client.post(reverse("duels:duel_new"), {
        "a": builtin.uuid, "b": keyless.uuid, "attempts": 2}, **HTMX)
    assert response.status_code == 400
    page = response.content.decode()
    assert "MISSING_TEST_API_KEY is not set" in page
    assert "manage.py player_check keyless" in page
    assert not Duel.objects.exists()
