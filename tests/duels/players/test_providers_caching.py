"""Prompt caching: Anthropic breakpoints, OpenAI prompt_cache_key, cache tokens and prices."""

from __future__ import annotations

import json

import pytest

from duels.engine.costs import completion_cost
from duels.models import Player
from duels.players import player_client, prompts
from tests.duels.players.loopback import LoopbackServer, loopback_player, reply

KEY = "sk-loopback-test-key-0123456789"
EPHEMERAL = {"type": "ephemeral"}
OBSERVATIONS = [f"Room {n}: " + "a long corridor with doors. " * 40 for n in range(4)]


@pytest.fixture
def server():
    with LoopbackServer(count_tokens=True) as running:
        yield running


@pytest.fixture(autouse=True)
def environment(monkeypatch, settings, tmp_path):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", KEY)
    settings.ENVDUELS_PLAYER_SLOT_DIR = str(tmp_path / "slots")


def play_turns(player: Player, turns: int, *, hint: str | None = "Go north.") -> list:
    """Play `turns` solver turns the way an episode does; return the completions."""
    client = player_client(player)
    history: list[tuple[str, str]] = []
    completions = []
    for observation in OBSERVATIONS[:turns]:
        messages = prompts.solver_messages(hint=hint, history=history, observation=observation)
        completion = client.complete(messages, cache_key="episode-1234")
        completions.append(completion)
        history.append((observation, completion.text))
    return completions


def marked(body: dict) -> list[str]:
    """Where the request carries cache_control: 'system' and message indices."""
    places = ["system"] * sum(
        "cache_control" in block for block in body.get("system") or [] if isinstance(block, dict)
    )
    for index, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list) and any("cache_control" in block for block in content):
            places.append(str(index))
    return places


def test_anthropic_marks_the_prefix_with_breakpoints_from_the_second_turn(server):
    server.script(*[reply("Walking on.\nACTION: north")] * 3)
    play_turns(loopback_player(server, "anthropic"), 3)
    first, second, third = (request.body for request in server.received)
    assert marked(first) == []  # one turn: nothing to reuse yet
    # From turn two: the system prompt with the hint, where the previous request ended (the
    # prefix read from the cache) and the end of this request (written for the next turn).
    assert marked(second) == ["system", "0", "2"]
    assert second["system"][0]["cache_control"] == EPHEMERAL
    assert "Go north." in second["system"][0]["text"]
    assert marked(third) == ["system", "2", "4"]
    assert third["messages"][2]["content"][0]["text"] == OBSERVATIONS[1]


def test_anthropic_cache_reads_are_recorded_and_priced(server):
    server.script(*[reply("Walking on.\nACTION: north")] * 4)
    player = loopback_player(server, "anthropic", price_in=3.0, price_out=15.0)
    completions = play_turns(player, 4)
    first, second, third, fourth = completions
    assert (first.cache_read_tokens, first.cache_write_tokens) == (0, 0)
    assert second.cache_read_tokens == 0 and second.cache_write_tokens == second.input_tokens
    for later, earlier in ((third, second), (fourth, third)):
        assert later.cache_read_tokens == earlier.input_tokens  # the whole previous prompt
        assert 0 < later.cache_write_tokens < later.input_tokens - later.cache_read_tokens + 1
        assert later.raw["usage"]["cache_read_tokens"] == later.cache_read_tokens
    # Priced at the documented ratios: reads 0.1x, writes 1.25x the input price.
    assert player.cached_in_price == pytest.approx(0.3)
    assert player.cache_write_price == pytest.approx(3.75)
    uncached = fourth.input_tokens - fourth.cache_read_tokens - fourth.cache_write_tokens
    expected = (uncached * 3.0 + fourth.cache_read_tokens * 0.3
                + fourth.cache_write_tokens * 3.75 + fourth.output_tokens * 15.0) / 1e6
    assert completion_cost(player=player, completion=fourth) == pytest.approx(expected)
    full_price = (fourth.input_tokens * 3.0 + fourth.output_tokens * 15.0) / 1e6
    assert completion_cost(player=player, completion=fourth) < 0.4 * full_price


def test_anthropic_params_can_turn_caching_off(server):
    server.script(*[reply("Walking on.\nACTION: north")] * 3)
    completions = play_turns(loopback_player(server, "anthropic", params={"cache": False}), 3)
    assert all(marked(request.body) == [] for request in server.received)
    assert all(c.cache_read_tokens == c.cache_write_tokens == 0 for c in completions)


def test_openai_sends_one_cache_key_and_a_byte_identical_prefix(server):
    server.script(*[reply("Walking on.\nACTION: north")] * 3)
    completions = play_turns(loopback_player(server, "openai"), 3)
    bodies = [json.loads(request.raw) for request in server.received]
    assert {body["prompt_cache_key"] for body in bodies} == {"episode-1234"}
    for earlier, later in zip(bodies, bodies[1:], strict=False):
        sent = [json.dumps(m, sort_keys=True) for m in earlier["messages"]]
        assert [json.dumps(m, sort_keys=True) for m in later["messages"][: len(sent)]] == sent
    # OpenAI's usage counts cached tokens inside prompt_tokens.
    assert completions[0].cache_read_tokens == 0
    assert completions[2].cache_read_tokens > 0
    assert completions[2].cache_read_tokens < completions[2].input_tokens


def test_openai_cached_tokens_are_recorded_and_priced(server):
    server.script(*[reply("Walking on.\nACTION: north")] * 2)
    player = loopback_player(server, "openai", price_in=2.0, price_out=8.0)
    second = play_turns(player, 2)[1]
    assert second.cache_read_tokens > 0 and second.cache_write_tokens == 0
    assert player.cached_in_price == pytest.approx(1.0)  # OpenAI's documented 50%
    uncached = second.input_tokens - second.cache_read_tokens
    expected = (uncached * 2.0 + second.cache_read_tokens * 1.0 + second.output_tokens * 8.0) / 1e6
    assert completion_cost(player=player, completion=second) == pytest.approx(expected)
    player.price_cached_in = 0.2  # a newer model's own cached price wins over the ratio
    cheaper = (uncached * 2.0 + second.cache_read_tokens * 0.2 + second.output_tokens * 8.0) / 1e6
    assert completion_cost(player=player, completion=second) == pytest.approx(cheaper)


def test_compatible_servers_get_no_cache_key_unless_asked(server):
    server.script(*[reply("Walking on.\nACTION: north")] * 2)
    play_turns(loopback_player(server, "openai_compatible"), 1)
    play_turns(loopback_player(server, "openai_compatible", params={"cache": True}), 1)
    plain, asked = (request.body for request in server.received)
    assert "prompt_cache_key" not in plain
    assert asked["prompt_cache_key"] == "episode-1234"


def test_cost_of_prices_each_kind_of_input_token():
    player = Player(provider="anthropic", price_in=10.0, price_out=20.0,
                    price_cached_in=1.5, price_cache_write=12.0)
    cost = player.cost_of(input_tokens=1_000_000, output_tokens=0,
                          cache_read_tokens=500_000, cache_write_tokens=200_000)
    assert cost == pytest.approx(300_000 * 10 / 1e6 + 0.75 + 2.4)
    compatible = Player(provider="openai_compatible", price_in=10.0, price_out=0.0)
    assert compatible.cached_in_price == 10.0  # no documented discount: full price
