"""A player's context window: how many tokens a request may hold, and what happens past it.

The rule (docs/players.md, "Context window"), as the original harness has it: a conversation
that no longer fits the solver's context window is **the model's failure of that episode**,
never an infrastructure fault; a setter prompt (or repair) that does not fit is the setter's
forfeit. So an overflow is a `ContextOverflow`, a PlayerError that is never retried, whether
EnvDuels sees it coming (the window is known and the prompt alone fills it) or the server
reports it (an HTTP error, or an error inside a stream, in any of the servers' wordings).

The window is the player's `params.context_window` when set, else what the server says about
the model (vLLM's `max_model_len`, or `context_length` / `context_window` / `n_ctx` where a
server lists them under GET /models), else unknown. Where it is known, a request's `max_tokens`
is fitted to what the prompt leaves, so a setter's 8,192-token answer limit never asks a
2,048-token model for more than it holds.

Token counts EnvDuels makes itself (a prompt before it is sent, or a streamed reply from a
server that sends no usage) come from `tokens_estimate`: one rule, 1 token per 4 characters
plus a few per message for the chat template, the usual figure for English and code.
"""

from __future__ import annotations

import functools
import json
import math
import re
import urllib.request
from typing import Any

from duels.players.base import Message, PlayerError

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4  # role markers and separators a chat template adds
# The estimate may be off by this share; a request is fitted to the window with this margin.
ESTIMATE_MARGIN = 0.15
# Fewer tokens than this left for the reply is no room to answer in: an overflow.
MIN_REPLY_TOKENS = 16
SERVER_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "n_ctx",
                      "max_context_length")

# How servers word an overflow: OpenAI and llama-cpp-python ("maximum context length",
# "context_length_exceeded"), llama.cpp ("exceed context window", "exceeds the available
# context size"), vLLM ("maximum context length", "too long"), Ollama and Anthropic
# ("prompt is too long", "context window").
OVERFLOW_PATTERN = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|exceeds? (?:the )?(?:available )?"
    r"context (?:window|size|length)|context window|prompt is too long|input is too long|"
    r"too many tokens",
    re.IGNORECASE,
)


class ContextOverflow(PlayerError):
    """The request does not fit the player's context window: the model's failure, not a fault
    to retry."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, status=status, retryable=False)


def overflow_reported(text: str) -> bool:
    """True when a server's error message says the request overflowed the context window."""
    return bool(OVERFLOW_PATTERN.search(text or ""))


def tokens_estimate(text: str) -> int:
    """Tokens in `text` by EnvDuels' own count (see the module docstring)."""
    return math.ceil(len(text or "") / CHARS_PER_TOKEN)


def messages_tokens_estimate(messages: list[Message]) -> int:
    """Prompt tokens of a chat by EnvDuels' own count."""
    return sum(tokens_estimate(str(message.get("content") or "")) + TOKENS_PER_MESSAGE
               for message in messages)


def window_from_models(payload: Any, *, model: str) -> int | None:
    """The context window a GET /models answer gives for `model` (or its only model)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        return None
    entries = [entry for entry in payload["data"] if isinstance(entry, dict)]
    chosen = next((entry for entry in entries if entry.get("id") == model),
                  entries[0] if len(entries) == 1 else None)
    if chosen is None:
        return None
    for place in (chosen, chosen.get("meta") if isinstance(chosen.get("meta"), dict) else {}):
        for key in SERVER_WINDOW_KEYS:
            value = place.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


@functools.lru_cache(maxsize=64)
def server_window(base_url: str, model: str) -> int | None:
    """Ask an OpenAI-compatible server once per process; None when it does not say."""
    if not base_url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
        return None  # only local servers are asked; hosted APIs publish no window here
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=3) as response:
            return window_from_models(json.loads(response.read(1_000_000)), model=model)
    except (OSError, ValueError):
        return None


def player_context_window(*, provider: str, base_url: str, model: str,
                          params: dict[str, Any]) -> int | None:
    """The player's context window in tokens, or None when unknown."""
    configured = params.get("context_window")
    if configured is not None:
        try:
            window = int(configured)
        except (TypeError, ValueError):
            raise PlayerError(f"player param context_window must be a whole number of tokens, "
                              f"got {configured!r}") from None
        if window <= 0:
            raise PlayerError(f"player param context_window must be positive, got {configured!r}")
        return window
    if provider == "openai_compatible" and base_url:
        return server_window(base_url, model)
    return None


def fit_max_tokens(*, messages: list[Message], max_tokens: int, window: int | None,
                   who: str) -> int:
    """`max_tokens` lowered to what the prompt leaves of `window`; ContextOverflow when the
    prompt leaves less than MIN_REPLY_TOKENS."""
    if not window:
        return max_tokens
    prompt = math.ceil(messages_tokens_estimate(messages) * (1 + ESTIMATE_MARGIN))
    room = window - prompt
    if room < MIN_REPLY_TOKENS:
        raise ContextOverflow(
            f"{who}: the conversation (about {prompt:,} tokens) no longer fits the model's "
            f"context window of {window:,} tokens")
    return min(max_tokens, room)
