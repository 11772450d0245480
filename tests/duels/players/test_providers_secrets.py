"""A honeytoken API key must reach the provider and nothing else: no row, no log, no output."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.core.management import call_command, get_commands
from django.core.management.base import CommandError

from duels.engine.costs import completion_cost
from duels.models import ModelCall, Step
from duels.players import player_client
from tests.duels.players.loopback import (
    LoopbackServer,
    loopback_player,
    reply,
    server_error,
    tool_call,
)

HONEYTOKEN = "sk-honeytoken-7f3a9c1e5b2d4068-never-store-me"
LOGGERS = ("", "httpx", "httpx2", "httpcore", "httpcore2", "anthropic", "openai", "duels")


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("HONEY_TEST_API_KEY", HONEYTOKEN)
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


@pytest.mark.django_db
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_api_key_is_sent_to_the_provider_and_stored_nowhere(caplog, make, tmp_path, provider):
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    output = io.StringIO()
    with LoopbackServer() as server:
        unsaved = loopback_player(server, provider, api_key_env="HONEY_TEST_API_KEY")
        player = make.player(
            **{
                f.attname: getattr(unsaved, f.attname)
                for f in unsaved._meta.concrete_fields
                if f.attname not in {"id", "uuid", "created_at"}
            }
        )
        # A successful check, then a failing one whose error body echoes the key.
        echo = json.dumps({"error": {"type": "authentication_error", "message": HONEYTOKEN}})
        server.script(tool_call("ready", text="ACTION: ready"), server_error(401, body=echo))
        call_command("player_check", player.name, stdout=output)
        with pytest.raises(CommandError) as failed:
            call_command("player_check", player.name, "--json", stdout=output)
        output.write(str(failed.value))

        # A solver turn stored the way the engine stores it.
        server.script(reply("I try the door.\nACTION: open door", input_tokens=50, output_tokens=9))
        completion = player_client(player).complete(
            [{"role": "system", "content": "Solve it."}, {"role": "user", "content": "A door."}]
        )
        episode = make.episode(solver=player)
        Step.objects.create(
            episode=episode,
            index=1,
            observation="A door.",
            reply=completion.text,
            action="open door",
            latency_ms=completion.latency_ms,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
        )
        ModelCall.objects.create(
            player=player,
            role=ModelCall.Role.SETTER,
            messages=[{"role": "user", "content": "A door."}],
            reply=completion.text,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            latency_ms=completion.latency_ms,
            cost=completion_cost(player=player, completion=completion),
        )
        episode.error = json.dumps(completion.raw)
        episode.save()

    # The key really travelled, so the assertions below can fail.
    sent = [
        r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in server.received
    ]
    assert len(sent) == 3 and all(HONEYTOKEN in value for value in sent)

    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)
    assert player.name in dump.getvalue() and "HONEY_TEST_API_KEY" in dump.getvalue()
    assert "open door" in dump.getvalue()
    assert HONEYTOKEN not in dump.getvalue()
    assert ModelCall.objects.filter(role="check", error__contains="HTTP 401").exists()

    if "export" in get_commands():
        exported = tmp_path / "export.jsonl"
        call_command("export", "--out", str(exported), stdout=io.StringIO())
        assert HONEYTOKEN not in exported.read_text()

    assert "ACTION: ready" in output.getvalue() and "HTTP 401" in output.getvalue()
    assert HONEYTOKEN not in output.getvalue()

    assert any(record.name.startswith(provider) for record in caplog.records)  # SDK debug on
    for record in caplog.records:
        assert HONEYTOKEN not in record.getMessage()
    assert HONEYTOKEN not in caplog.text
