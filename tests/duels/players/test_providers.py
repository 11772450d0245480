"""The Anthropic and OpenAI SDKs against a loopback server speaking their real wire formats."""

from __future__ import annotations

import json
import socket
import time

import pytest

from duels.players import PlayerError, player_client, player_require_credentials
from duels.players.actions import action_read
from tests.duels.players.loopback import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    LoopbackServer,
    empty,
    hang,
    loopback_player,
    malformed,
    rate_limited,
    reply,
    server_error,
)

PROVIDERS = ["anthropic", "openai", "openai_compatible"]
KEY = "sk-loopback-test-key-0123456789"
PATHS = {"anthropic": ANTHROPIC_PATH, "openai": OPENAI_PATH, "openai_compatible": OPENAI_PATH}

CHAT = [
    {"role": "system", "content": "You are the SOLVER."},
    {"role": "user", "content": "Observation one."},
    {"role": "user", "content": "Observation two."},
    {"role": "assistant", "content": "ACTION: look"},
    {"role": "user", "content": "You see a door."},
]


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", KEY)
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_success_returns_text_tokens_latency_and_summary(server, provider):
    server.script(reply("thinking...\nACTION: open door", input_tokens=42, output_tokens=7))
    completion = player_client(loopback_player(server, provider)).complete(
        CHAT, max_tokens=321, temperature=0.0
    )
    assert completion.text == "thinking...\nACTION: open door"
    assert (completion.input_tokens, completion.output_tokens) == (42, 7)
    assert completion.latency_ms >= 0
    raw = completion.raw
    assert raw["model"] == f"{provider}-test-model"
    assert raw["retries"] == 0
    assert raw["stop_reason"] == ("end_turn" if provider == "anthropic" else "stop")
    assert raw["usage"] == {
        "input_tokens": 42, "output_tokens": 7, "cache_read_tokens": 0, "cache_write_tokens": 0
    }
    assert raw["streamed"] is True
    assert raw["id"] in {"msg_loopback", "chatcmpl-loopback"}
    assert json.loads(json.dumps(raw)) == raw
    assert "headers" not in json.dumps(raw).lower()
    [request] = server.received
    assert request.path == PATHS[provider]
    assert request.body["model"] == f"{provider}-test-model"


def test_anthropic_request_has_system_param_and_alternating_turns(server):
    server.script(reply("ACTION: wait"))
    uncached = loopback_player(server, "anthropic", params={"cache": False})
    player_client(uncached).complete(CHAT, max_tokens=99)
    body = server.received[0].body
    assert body["system"] == "You are the SOLVER."
    assert body["messages"] == [
        {"role": "user", "content": "Observation one.\n\nObservation two."},
        {"role": "assistant", "content": "ACTION: look"},
        {"role": "user", "content": "You see a door."},
    ]
    assert body["max_tokens"] == 99
    assert "temperature" not in body  # this Messages API has no sampling knobs


def test_anthropic_params_reach_the_body(server):
    server.script(reply("ACTION: wait"))
    params = {"max_tokens": 77, "temperature": 0.5, "effort": "low", "extra_body": {"x": 1}}
    player_client(loopback_player(server, "anthropic", params=params)).complete(CHAT)
    body = server.received[0].body
    assert body["max_tokens"] == 77
    assert body["temperature"] == 0.5
    assert body["output_config"] == {"effort": "low"}
    assert body["x"] == 1


def test_openai_request_keeps_roles_and_applies_player_params(server):
    server.script(reply("ACTION: wait"))
    params = {"temperature": 0.7, "top_p": 0.9, "max_tokens": 55, "system_role": "developer"}
    player = loopback_player(server, "openai", params=params)
    player_client(player).complete(CHAT, max_tokens=999, temperature=0.0)
    body = server.received[0].body
    assert [m["role"] for m in body["messages"]] == [
        "developer",
        "user",
        "user",
        "assistant",
        "user",
    ]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.7, 0.9, 55)


def test_openai_compatible_can_fold_system_into_first_user_message(server):
    server.script(reply("ACTION: wait"))
    player = loopback_player(server, "openai_compatible", params={"system_role": "user"})
    player_client(player).complete(CHAT)
    messages = server.received[0].body["messages"]
    assert messages[0] == {"role": "user", "content": "You are the SOLVER.\n\nObservation one."}
    assert all(m["role"] != "system" for m in messages)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_waits_for_retry_after_then_succeeds(server, provider):
    server.script(rate_limited(retry_after="0.3"), reply("ACTION: go"))
    player = loopback_player(server, provider, params={"backoff_base_s": 0.001})
    started = time.monotonic()
    completion = player_client(player).complete(CHAT)
    assert time.monotonic() - started >= 0.3  # Retry-After honoured, not the 1 ms backoff
    assert completion.text == "ACTION: go"
    assert completion.raw["retries"] == 1
    assert len(server.received) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_after_last_try_is_a_player_error_with_status(server, provider):
    server.script(*[rate_limited(retry_after="0")] * 3)
    with pytest.raises(PlayerError) as caught:
        player_client(loopback_player(server, provider)).complete(CHAT)
    assert caught.value.status == 429
    assert "HTTP 429" in str(caught.value)
    assert "gave up after 3 tries" in str(caught.value)
    assert len(server.received) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500_is_retried_with_backoff(server, provider):
    server.script(server_error(500), server_error(503), reply("ACTION: fine"))
    completion = player_client(loopback_player(server, provider)).complete(CHAT)
    assert completion.text == "ACTION: fine"
    assert completion.raw["retries"] == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500_every_time_fails_with_the_status(server, provider):
    server.script(*[server_error(500)] * 2)
    player = loopback_player(server, provider, params={"max_retries": 1})
    with pytest.raises(PlayerError) as caught:
        player_client(player).complete(CHAT)
    assert caught.value.status == 500
    assert "HTTP 500" in str(caught.value) and "gave up after 2 tries" in str(caught.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_client_error_is_not_retried(server, provider):
    server.script(server_error(400))
    with pytest.raises(PlayerError) as caught:
        player_client(loopback_player(server, provider)).complete(CHAT)
    assert caught.value.status == 400
    assert len(server.received) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_timeout_is_a_player_error_after_the_retries(server, provider):
    server.script(hang(3), hang(3))
    player = loopback_player(server, provider, params={"timeout_s": 0.3, "max_retries": 1})
    started = time.monotonic()
    with pytest.raises(PlayerError) as caught:
        player_client(player).complete(CHAT)
    assert "timeout" in str(caught.value)
    assert "gave up after 2 tries" in str(caught.value)
    assert 0.6 <= time.monotonic() - started < 2.5
    assert len(server.received) == 2


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_timeout_then_success(server, provider):
    server.script(hang(3), reply("ACTION: late"))
    player = loopback_player(server, provider, params={"timeout_s": 0.3})
    assert player_client(player).complete(CHAT).text == "ACTION: late"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_json_is_a_clear_player_error(server, provider):
    server.script(malformed())
    with pytest.raises(PlayerError, match="not valid JSON"):
        player_client(loopback_player(server, provider)).complete(CHAT)
    assert len(server.received) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_content_is_a_reply_read_as_a_format_error(server, provider):
    server.script(empty())
    completion = player_client(loopback_player(server, provider)).complete(CHAT)
    assert completion.text == ""
    parsed = action_read(completion=completion, protocol="text")
    assert parsed.action == "" and parsed.format_error == "the reply has no content"


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize(("provider", "stop"), [("anthropic", "max_tokens"),
                                                ("openai", "length"),
                                                ("openai_compatible", "length")])
def test_a_reasoning_only_reply_at_the_token_limit_is_that_turns_format_error(
        server, provider, stop, streaming):
    """The model thought until its token limit and wrote nothing: its reply, not a fault."""
    server.script(reply("", thinking="Let me weigh the levers one by one... " * 20, stop=stop))
    player = loopback_player(server, provider, params={"stream": streaming})
    completion = player_client(player).complete(CHAT)
    assert completion.text == "" and completion.thinking.startswith("Let me weigh")
    for protocol in ("text", "tool"):
        parsed = action_read(completion=completion, protocol=protocol)
        assert parsed.action == ""
        assert parsed.format_error == (f"the reply has no content: the model reached its token "
                                       f"limit ({stop}) while reasoning, before writing an answer")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_unreachable_url_names_the_address(provider):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}" + ("" if provider == "anthropic" else "/v1")
    player = loopback_player(
        LoopbackServer(), provider, base_url=base_url, params={"max_retries": 1}
    )
    with pytest.raises(PlayerError) as caught:
        player_client(player).complete(CHAT)
    assert f"could not connect to {base_url}" in str(caught.value)
    assert caught.value.status is None


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_missing_key_fails_before_any_request_naming_the_variable(server, monkeypatch, provider):
    monkeypatch.delenv("LOOPBACK_TEST_API_KEY")
    player = loopback_player(server, provider)
    with pytest.raises(PlayerError, match="LOOPBACK_TEST_API_KEY is not set"):
        player_require_credentials(player)
    with pytest.raises(PlayerError, match="LOOPBACK_TEST_API_KEY"):
        player_client(player)
    assert server.received == []


def test_blank_key_variable_name_is_an_error_for_hosted_providers(server):
    player = loopback_player(server, "anthropic", api_key_env="")
    with pytest.raises(PlayerError, match="api_key_env"):
        player_client(player)


def test_compatible_server_without_key_never_gets_the_openai_key(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-must-not-travel")
    server.script(reply("ACTION: ok"))
    player = loopback_player(server, "openai_compatible", api_key_env="")
    assert player_client(player).complete(CHAT).text == "ACTION: ok"
    assert "sk-real-openai-key" not in server.received[0].headers.get("authorization", "")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_key_echoed_by_the_server_is_scrubbed_from_the_error(server, provider):
    server.script(server_error(401, body=json.dumps({"error": {"message": f"bad key {KEY}"}})))
    with pytest.raises(PlayerError) as caught:
        player_client(loopback_player(server, provider)).complete(CHAT)
    assert caught.value.status == 401
    assert KEY not in str(caught.value)
    assert "[redacted]" in str(caught.value)


def test_retry_after_longer_than_the_player_waits_gives_up_at_once(server):
    server.script(rate_limited(retry_after="3600"))
    with pytest.raises(PlayerError, match="asks to wait 3600 s") as caught:
        player_client(loopback_player(server, "openai")).complete(CHAT)
    assert caught.value.status == 429
    assert len(server.received) == 1
