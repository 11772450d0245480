"""Streamed replies through the official SDKs: partial text, thinking, dropped streams."""

from __future__ import annotations

import pytest

from duels.players import player_client
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply, stream_drop

KEY = "sk-loopback-test-key-0123456789"
PROVIDERS = ["anthropic", "openai", "openai_compatible"]
CHAT = [
    {"role": "system", "content": "You are the SOLVER."},
    {"role": "user", "content": "You see a door."},
]
LONG_REPLY = "I try the handle first, since doors here are rarely locked.\nACTION: open door"


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", KEY)
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_streamed_reply_arrives_in_growing_parts_then_whole(server, provider):
    server.script(reply(LONG_REPLY, input_tokens=30, output_tokens=20))
    seen: list[str] = []
    completion = player_client(loopback_player(server, provider)).complete(
        CHAT, on_partial=lambda text, thinking: seen.append(text)
    )
    assert completion.text == LONG_REPLY
    assert (completion.input_tokens, completion.output_tokens) == (30, 20)
    assert completion.raw["streamed"] is True
    assert len(seen) >= 5 and seen[-1] == LONG_REPLY
    assert all(later.startswith(earlier) for earlier, later in zip(seen, seen[1:], strict=False))
    assert seen[0] != LONG_REPLY  # the first part came before the whole reply
    [request] = server.received
    assert request.body["stream"] is True
    if provider != "anthropic":
        assert request.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_false_asks_for_one_json_body(server, provider):
    server.script(reply(LONG_REPLY, thinking="Doors open."))
    player = loopback_player(server, provider, params={"stream": False})
    completion = player_client(player).complete(CHAT)
    assert completion.text == LONG_REPLY and completion.thinking == "Doors open."
    assert completion.raw["streamed"] is False
    assert "stream" not in server.received[0].body


def test_anthropic_thinking_budget_is_requested_and_the_thinking_kept(server):
    server.script(reply(LONG_REPLY, thinking="The door is probably unlocked; try it."))
    partial_thinking: list[str] = []
    player = loopback_player(server, "anthropic", params={"thinking": 2048})
    completion = player_client(player).complete(
        CHAT, max_tokens=1000, on_partial=lambda text, thinking: partial_thinking.append(thinking)
    )
    assert completion.thinking == "The door is probably unlocked; try it."
    assert completion.text == LONG_REPLY  # thinking never leaks into the reply
    body = server.received[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048  # room for the reply after the thinking
    assert partial_thinking[0] and partial_thinking[-1] == completion.thinking


def test_anthropic_thinking_budget_below_the_minimum_is_refused(server):
    from duels.players import PlayerError

    player = loopback_player(server, "anthropic", params={"thinking": 100})
    with pytest.raises(PlayerError, match="thinking must be a token budget of at least 1024"):
        player_client(player).complete(CHAT)
    assert server.received == []


@pytest.mark.parametrize("provider", ["openai", "openai_compatible"])
def test_reasoning_content_is_kept_apart_from_the_reply(server, provider):
    server.script(reply(LONG_REPLY, thinking="Handles turn. Doors open."))
    completion = player_client(loopback_player(server, provider)).complete(CHAT)
    assert completion.thinking == "Handles turn. Doors open."
    assert completion.text == LONG_REPLY


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_dropped_mid_reply_is_retried_from_the_start(server, provider):
    server.script(stream_drop(LONG_REPLY, after=3), reply(LONG_REPLY))
    seen: list[str] = []
    completion = player_client(loopback_player(server, provider)).complete(
        CHAT, on_partial=lambda text, thinking: seen.append(text)
    )
    assert completion.text == LONG_REPLY
    assert completion.raw["retries"] == 1
    assert len(server.received) == 2
    restart = seen.index("")  # viewers are told the partial text is void
    assert 0 < restart < len(seen) - 1
    assert seen[restart - 1] == LONG_REPLY[: len(seen[restart - 1])]
    assert seen[-1] == LONG_REPLY


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_dropped_every_time_fails_as_retryable(server, provider):
    from duels.players import PlayerError

    server.script(*[stream_drop(LONG_REPLY, after=1)] * 3)
    with pytest.raises(PlayerError, match="broke off|ended before") as caught:
        player_client(loopback_player(server, provider)).complete(CHAT)
    assert caught.value.retryable  # an infrastructure fault, never the model's result
    assert "gave up after 3 tries" in str(caught.value)


@pytest.mark.parametrize("name", ["stream", "cache", "stream_usage"])
def test_switch_params_must_be_true_or_false(server, name):
    from duels.players import PlayerError

    player = loopback_player(server, "openai", params={name: "no"})
    with pytest.raises(PlayerError, match=f"player param {name} must be true or false"):
        player_client(player).complete(CHAT)
    assert server.received == []
