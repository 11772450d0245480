"""A player's context window: max_tokens fitted to it, an overflow the model's failure whether
EnvDuels sees it coming or the server reports it (inside a stream or outside), and token counts
made locally when a stream carries no usage."""

from __future__ import annotations

import math
import random

import pytest

from duels.players import player_client
from duels.players.context import (
    ESTIMATE_MARGIN,
    MIN_REPLY_TOKENS,
    ContextOverflow,
    fit_max_tokens,
    messages_tokens_estimate,
    overflow_reported,
    window_from_models,
)
from tests.duels.players.loopback import (
    LoopbackServer,
    connection_reset,
    context_overflow,
    loopback_player,
    reply,
    server_error,
    silent_stream,
    stream_drop,
)

CHAT = [{"role": "system", "content": "You play a game."},
        {"role": "user", "content": "You are in a room. What now?"}]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("LOOPBACK_TEST_API_KEY", "sk-loopback-test")


def _chat(rng: random.Random) -> list[dict[str, str]]:
    return [{"role": rng.choice(["system", "user", "assistant"]),
             "content": "x" * rng.randrange(0, 4000)} for _ in range(rng.randrange(1, 12))]


def test_fitted_max_tokens_leave_the_prompt_inside_the_window_for_generated_chats():
    rng = random.Random(58)
    overflows = fits = 0
    for _ in range(2000):
        messages = _chat(rng)
        window = rng.choice([512, 2048, 4096, 8192, 32768])
        requested = rng.randrange(1, 10000)
        try:
            fitted = fit_max_tokens(messages=messages, max_tokens=requested, window=window,
                                    who="player p")
        except ContextOverflow as overflow:
            overflows += 1
            # Only a prompt that leaves less than the smallest reply (with the estimate's
            # margin) overflows.
            with_margin = math.ceil(messages_tokens_estimate(messages) * (1 + ESTIMATE_MARGIN))
            assert window - with_margin < MIN_REPLY_TOKENS
            assert f"{window:,} tokens" in str(overflow)
            assert not overflow.retryable
            continue
        fits += 1
        assert fitted == min(requested, window - math.ceil(
            messages_tokens_estimate(messages) * (1 + ESTIMATE_MARGIN)))
        assert messages_tokens_estimate(messages) + fitted <= window
        # Unknown window: the request is left as asked.
        assert fit_max_tokens(messages=messages, max_tokens=requested, window=None,
                              who="p") == requested
    assert overflows > 100 and fits > 100


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 2048 tokens. However, you requested 2151 tokens",
    "Requested tokens (2131) exceed context window of 2048",
    "the request exceeds the available context size, try increasing it",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "context_length_exceeded",
])
def test_every_servers_wording_of_an_overflow_is_recognised(message):
    assert overflow_reported(message)


@pytest.mark.parametrize("message", ["overloaded, try again later", "invalid api key",
                                     "model not found", ""])
def test_other_errors_are_not_overflows(message):
    assert not overflow_reported(message)


def test_the_window_is_read_from_what_a_server_lists():
    vllm = {"data": [{"id": "qwen", "max_model_len": 32768}]}
    llama_cpp = {"data": [{"id": "m", "meta": {"n_ctx": 4096}}]}
    two = {"data": [{"id": "a", "context_length": 1}, {"id": "b", "context_length": 2}]}
    assert window_from_models(vllm, model="anything") == 32768  # the only model
    assert window_from_models(llama_cpp, model="m") == 4096
    assert window_from_models(two, model="b") == 2
    assert window_from_models(two, model="c") is None
    assert window_from_models({"data": [{"id": "m", "owned_by": "me"}]}, model="m") is None
    assert window_from_models("not json", model="m") is None


@pytest.mark.parametrize("stream", [True, False])
def test_a_setter_sized_max_tokens_is_fitted_to_the_window(stream):
    with LoopbackServer() as server:
        player = loopback_player(server, "openai_compatible",
                                 params={"context_window": 1024, "stream": stream})
        player_client(player).complete(CHAT, max_tokens=8192)
        sent = server.received[-1].body["max_tokens"]
    assert MIN_REPLY_TOKENS <= sent <= 1024 - messages_tokens_estimate(CHAT) < 8192


def test_a_prompt_that_fills_the_window_is_the_models_failure_and_nothing_is_sent():
    with LoopbackServer() as server:
        player = loopback_player(server, "openai_compatible", params={"context_window": 100})
        long_chat = [*CHAT, {"role": "user", "content": "look around " * 100}]
        with pytest.raises(ContextOverflow, match="no longer fits the model's context window"):
            player_client(player).complete(long_chat, max_tokens=64)
        assert server.received == []


@pytest.mark.parametrize("faults", [
    pytest.param((context_overflow(),), id="outside-a-stream"),
    # llama-cpp-python fails a streamed request after its 200 with an empty stream: asked
    # again whole, it gives its reason like any error outside a stream.
    pytest.param((silent_stream(), context_overflow()), id="inside-a-stream"),
    pytest.param((stream_drop(after=0), context_overflow()), id="a-stream-cut-before-a-word"),
    # ... and the pooled connection the whole request goes out on is the one being reset.
    pytest.param((silent_stream(), connection_reset(), context_overflow()),
                 id="asked-again-on-a-dropped-connection"),
])
def test_a_reported_overflow_is_classified_alike_inside_and_outside_a_stream(faults):
    with LoopbackServer() as server:
        server.script(*faults)
        player = loopback_player(server, "openai_compatible")
        with pytest.raises(ContextOverflow) as raised:
            player_client(player).complete(CHAT, max_tokens=64)
        # Never retried: the same request cannot fit on a second try.
        assert len(server.received) == len(faults)
    assert not raised.value.retryable
    assert "maximum context length is 2048 tokens" in str(raised.value)


def test_an_empty_stream_from_a_server_that_then_answers_whole_is_read_as_that_answer():
    with LoopbackServer() as server:
        server.script(silent_stream(), reply("ACTION: look"))
        completion = player_client(loopback_player(server, "openai_compatible")).complete(
            CHAT, max_tokens=64)
    assert completion.text == "ACTION: look"
    assert [seen.body.get("stream", False) for seen in server.received] == [True, False]


def test_other_server_errors_inside_a_stream_stay_transient():
    with LoopbackServer() as server:
        server.script(silent_stream(), server_error(503), reply("ACTION: wait"))
        completion = player_client(loopback_player(server, "openai_compatible")).complete(
            CHAT, max_tokens=64)
    assert completion.text == "ACTION: wait"
    assert completion.raw["retries"] == 1


class NoUsageServer(LoopbackServer):
    """Streams replies without a usage chunk whatever the request asks, as llama-cpp-python."""

    def _next_fault(self, request):
        request.pop("stream_options", None)
        return super()._next_fault(request)


def test_a_stream_without_usage_is_counted_locally_and_says_so():
    text = "I will look around first.\nACTION: look"
    with NoUsageServer() as server:
        server.script(reply(text, input_tokens=0, output_tokens=0))
        completion = player_client(loopback_player(server, "openai_compatible")).complete(
            CHAT, max_tokens=64)
    assert completion.input_tokens == messages_tokens_estimate(CHAT) > 0
    assert completion.output_tokens == (len(text) + 3) // 4
    assert completion.raw["usage_source"] == "estimated"
    assert completion.raw["usage"]["input_tokens"] == completion.input_tokens


def test_usage_from_the_server_is_kept_as_sent():
    with LoopbackServer() as server:
        server.script(reply("ACTION: look", input_tokens=42, output_tokens=7))
        completion = player_client(loopback_player(server, "openai_compatible")).complete(
            CHAT, max_tokens=64)
    assert (completion.input_tokens, completion.output_tokens) == (42, 7)
    assert completion.raw["usage_source"] == "server"
