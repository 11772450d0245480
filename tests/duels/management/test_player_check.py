"""`manage.py player_check NAME`: latency, tokens and reply, or the exact error."""

from __future__ import annotations

import io
import json
import socket

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from duels.management.commands.player_check import Command
from duels.models import ModelCall
from tests.duels.players.loopback import (
    LoopbackServer,
    loopback_player,
    reply,
    server_error,
    tool_call,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-player-check-key-12345678")
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


def saved_player(make, server, provider, **overrides):
    unsaved = loopback_player(server, provider, **overrides)
    fields = {
        field.attname: getattr(unsaved, field.attname)
        for field in unsaved._meta.concrete_fields
        if field.attname not in {"id", "uuid", "created_at"}
    }
    return make.player(**fields)


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("player_check", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_reports_latency_tokens_and_reply(make, server, provider):
    player = saved_player(make, server, provider, params={"actions": "text"})
    server.script(reply("ACTION: ready", input_tokens=21, output_tokens=4))
    output = run(player.name)
    assert f"player {player.name}: {provider} {provider}-test-model at {player.base_url}" in output
    assert "latency " in output and " ms" in output
    assert "tokens 21 in / 4 out" in output
    assert "reply: ACTION: ready" in output
    assert "action: ready (text protocol)" in output
    call = ModelCall.objects.get(player=player)
    assert (call.role, call.input_tokens, call.output_tokens, call.error) == ("check", 21, 4, "")
    assert call.cost == pytest.approx((21 * 3.0 + 4 * 15.0) / 1_000_000)
    sent = server.received[0].body["messages"]
    assert any("ACTION: ready" in message["content"] for message in sent)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_tool_protocol_player_is_checked_with_the_act_tool(make, server, provider):
    player = saved_player(make, server, provider)
    server.script(tool_call("ready", text="Calling act."))
    output = run(player.name)
    assert "reply: Calling act." in output and "action: ready (tool protocol)" in output
    assert server.received[0].body["tools"]
    call = ModelCall.objects.get(player=player)
    assert "Call the tool act" in call.messages[-1]["content"]


def failed_check(*args: str) -> dict:
    """Run a check that must fail the command although the server answered; its JSON."""
    out = io.StringIO()
    with pytest.raises(CommandError, match="the reply had no readable action"):
        call_command("player_check", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_a_tool_player_that_answers_in_text_is_told_apart(make, server):
    player = saved_player(make, server, "openai")
    server.script(reply("ACTION: ready"))
    result = failed_check(player.name)
    assert result["ok"] is True and result["protocol"] == "tool" and result["action"] == ""
    assert "called no tool" in result["format_error"]


@pytest.mark.parametrize("text", [
    "I'm ready to assist you with your project.",
    "ACTION: <action>",
    "Sure!\n\n**ACTION:** `<action>`",
])
def test_a_reply_without_a_readable_action_fails_the_check(make, server, text):
    player = saved_player(make, server, "openai_compatible", params={"actions": "text"})
    server.script(reply(text))
    result = failed_check(player.name)
    assert result["action"] == "" and result["format_error"]


def test_json_output(make, server):
    player = saved_player(make, server, "openai", params={"actions": "text"})
    server.script(reply("ACTION: ready", input_tokens=9, output_tokens=2))
    result = json.loads(run(player.name, "--json"))
    assert result["ok"] is True
    assert (result["reply"], result["input_tokens"], result["output_tokens"]) == (
        "ACTION: ready",
        9,
        2,
    )
    assert result["latency_ms"] >= 0


def test_finds_a_player_by_uuid(make, server):
    player = saved_player(make, server, "openai", params={"actions": "text"})
    assert "reply: ACTION: ready" in run(str(player.uuid))


def test_control_characters_in_the_reply_are_escaped(make, server):
    player = saved_player(make, server, "openai", params={"actions": "text"})
    server.script(reply("ACTION: ready\x1b[2J"))
    output = run(player.name)
    assert "\x1b" not in output
    assert "ACTION: ready\\x1b[2J" in output


def test_missing_key_names_the_variable_and_sends_nothing(make, server, monkeypatch):
    player = saved_player(make, server, "anthropic")
    monkeypatch.delenv("LOOPBACK_TEST_API_KEY")
    with pytest.raises(CommandError, match="LOOPBACK_TEST_API_KEY is not set"):
        run(player.name)
    assert server.received == []
    assert "LOOPBACK_TEST_API_KEY" in ModelCall.objects.get(player=player).error


def test_unreachable_url(make):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    player = saved_player(
        make, LoopbackServer(), "openai_compatible", base_url=url, params={"max_retries": 0}
    )
    with pytest.raises(CommandError, match=f"could not connect to {url}"):
        run(player.name)


def test_http_status_is_reported(make, server):
    player = saved_player(make, server, "openai", params={"max_retries": 0})
    server.script(server_error(503))
    with pytest.raises(CommandError, match=r"failed \(HTTP 503\).*HTTP 503 from"):
        run(player.name)


def test_unknown_player_lists_the_known_ones(make):
    make.player(name="known-one")
    with pytest.raises(CommandError, match="no player named 'ghost'.*known-one"):
        run("ghost")


def test_failure_exits_non_zero(make, server, capsys):
    player = saved_player(make, server, "openai", params={"max_retries": 0})
    server.script(server_error(500))
    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "player_check", player.name])
    assert exited.value.code == 1
    assert "HTTP 500" in capsys.readouterr().err


def test_builtin_player_answers_offline(make):
    player = make.player()
    output = run(player.name)
    assert "reply: " in output
    assert ModelCall.objects.get(player=player).error == ""
