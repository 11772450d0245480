"""A player imported from a snapshot or a file (never called until staff configure it) is not
offered in the duel, study and evaluation forms; once staff set its key variable it is."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from duels.models import Panel, Player, Provider
from duels.services.players import player_set_api_key_env

pytestmark = pytest.mark.django_db


def test_imported_players_are_offered_only_once_configured(client, owner):
    call_command("seed_builtin", verbosity=0)
    imported = Player.objects.create(name="alpha-7b", provider=Provider.OPENAI_COMPATIBLE,
                                     model="alpha-7b", imported=True)
    panel = Panel.objects.create(name="p", manifest_sha256="0" * 64)
    client.force_login(owner)
    pages = ("/duels/new/", "/studies/new/", f"/panels/{panel.uuid}/")
    for url in pages:
        page = client.get(url).content.decode()
        assert "builtin-rookie" in page and f'value="{imported.uuid}"' not in page, url
    player_set_api_key_env(player=imported, api_key_env="ALPHA_KEY")
    for url in pages:
        assert f'value="{imported.uuid}"' in client.get(url).content.decode(), url
