"""The API-key variable rule: checked when a player is saved and again before every call."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from duels.players import PlayerError, player_client
from duels.players.keys import api_key_env_problem
from duels.services.players import player_set_api_key_env
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_GATEWAY_TOKEN", "VLLM_KEY", "A2_API_KEY"]
)
def test_key_like_names_are_allowed(name):
    assert api_key_env_problem(name) is None


@pytest.mark.parametrize(
    "name",
    ["DJANGO_SECRET_KEY", "ENVDUELS_HONEY_API_KEY", "DATABASE_URL", "REDIS_URL", "SECRET_KEY",
     "PATH", "HOME", "openai_api_key", "KEY", "_API_KEY", "OPENAI_API_KEY ", "AWS_REGION"],
)
def test_other_names_are_refused(name):
    assert api_key_env_problem(name)


def test_model_clean_refuses_a_project_setting(make):
    player = make.player(name="p", provider="openai", model="m")
    player.api_key_env = "DJANGO_SECRET_KEY"
    with pytest.raises(ValidationError) as error:
        player.full_clean()
    assert "api_key_env" in error.value.message_dict


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai_compatible"])
def test_call_time_refuses_a_project_setting_even_if_stored(provider, monkeypatch, settings,
                                                            tmp_path):
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")
    monkeypatch.setenv("DJANGO_SECRET_KEY", "the-host-secret")
    with LoopbackServer() as server:
        server.script(reply("ACTION: ready"))
        # Saved behind clean()'s back (a raw update, an old row): the players layer still refuses.
        player = loopback_player(server, provider, api_key_env="DJANGO_SECRET_KEY")
        with pytest.raises(PlayerError, match="own settings"):
            player_client(player).complete([{"role": "user", "content": "hi"}])
        assert server.received == []


def test_setting_a_key_variable_clears_the_imported_mark(make):
    player = make.player(name="p", provider="openai", model="m", imported=True)
    with pytest.raises(ValidationError):
        player_set_api_key_env(player=player, api_key_env="REDIS_URL")
    player.refresh_from_db()
    assert (player.api_key_env, player.imported) == ("", True)
    player_set_api_key_env(player=player, api_key_env="OPENAI_API_KEY")
    player.refresh_from_db()
    assert (player.api_key_env, player.imported) == ("OPENAI_API_KEY", False)


def admin_form(player, **changes) -> dict:
    data = {
        "name": player.name, "provider": player.provider, "model": player.model,
        "base_url": player.base_url, "api_key_env": player.api_key_env, "params": "{}",
        "price_in": "0", "price_out": "0", "max_concurrency": "4", "description": "",
    }
    if player.imported:
        data["imported"] = "on"
    data.update(changes)
    return data


def test_staff_set_the_key_variable_in_the_admin(make, client, staff):
    player = make.player(name="p", provider="openai", model="m", imported=True)
    client.force_login(staff)
    url = f"/admin/duels/player/{player.pk}/change/"
    refused = client.post(url, admin_form(player, api_key_env="DJANGO_SECRET_KEY"))
    assert refused.status_code == 200
    assert "one of EnvDuels&#x27; own settings" in refused.text
    player.refresh_from_db()
    assert (player.api_key_env, player.imported) == ("", True)
    accepted = client.post(url, admin_form(player, api_key_env="OPENAI_API_KEY"))
    assert accepted.status_code == 302, accepted.text[:2000]
    player.refresh_from_db()
    assert (player.api_key_env, player.imported) == ("OPENAI_API_KEY", False)
