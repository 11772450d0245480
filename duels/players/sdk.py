"""What the Anthropic and OpenAI adapters share: keys, one timed attempt, errors, retries.

Both official SDKs raise the same family of exceptions (`APIStatusError` with `status_code` and
`response`, `APIConnectionError`, `APITimeoutError`), so one translation serves both. Keys are read
from the environment variable the player names, registered for scrubbing, and handed only to the
SDK client; no message this module builds can contain one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from django.views.decorators.debug import sensitive_variables

from duels.players.actions import action_from_tool_calls
from duels.players.base import ChatPlayer, Completion, Message, PartialReply, PlayerError
from duels.players.context import (
    ContextOverflow,
    fit_max_tokens,
    messages_tokens_estimate,
    overflow_reported,
    player_context_window,
    tokens_estimate,
)
from duels.players.keys import api_key_env_problem
from duels.players.redaction import secret_register, secret_scrub
from duels.players.retry import RetryPolicy, TransientError, call_with_retries, retry_after_seconds

RETRYABLE_STATUSES = frozenset({408, 429})
ERROR_DETAIL_CHARS = 300
# Transport errors (httpx names) that mean the connection was made and then the reply broke off.
READ_ERRORS = frozenset({"RemoteProtocolError", "ReadError", "ReadTimeout"})
# On/off player params: stream replies, ask for prompt caching, ask for usage in a stream.
SWITCHES = ("stream", "cache", "stream_usage")


def transport_errors() -> tuple[type[Exception], ...]:
    """Errors of the SDKs' HTTP transport, raised unwrapped while a streamed body is read
    (looked up when needed: the SDK that imported its transport is loaded by then)."""
    return tuple(
        module.TransportError
        for module in (sys.modules.get("httpx2"), sys.modules.get("httpx"))
        if module is not None and hasattr(module, "TransportError")
    )


@functools.lru_cache(maxsize=32)
def sdk_client(factory: Callable[..., Any], **options: Any) -> Any:
    """The process's SDK client for these options (key, URL, timeout...), made on first use.

    A client builds an HTTP connection pool and an SSL context (30 ms of CPU each time); shared,
    it also keeps connections and TLS sessions open from one call, episode or duel to the next.
    Both SDKs' clients may be used from several threads at once.
    """
    return factory(**options)


# A forked child must not share the parent's open connections.
os.register_at_fork(after_in_child=sdk_client.cache_clear)


@sensitive_variables("api_key")
def api_key_from_env(*, api_key_env: str, who: str, required: bool = True) -> str | None:
    """Return the key held by `api_key_env`, or raise PlayerError naming the variable.

    The name is checked against the key-variable rule first (duels.players.keys), so a variable
    holding one of the project's own settings is never read, let alone sent.
    """
    if api_key_env:
        problem = api_key_env_problem(api_key_env)
        if problem:
            raise PlayerError(f"{who}: refusing to send its API-key variable: {problem}")
    if not api_key_env:
        if required:
            raise PlayerError(
                f"{who} has no API-key variable configured: set the player's api_key_env to the "
                "name of the environment variable that holds its key"
            )
        return None
    api_key = os.environ.get(api_key_env, "").strip()
    if not api_key:
        raise PlayerError(
            f"{who}: the environment variable {api_key_env} is not set (or is empty); export it "
            "with the API key before starting work for this player"
        )
    secret_register(api_key)
    return api_key


def failure_from_sdk_error(
    exc: Exception, *, sdk: ModuleType, who: str, url: str, timeout_s: float
) -> PlayerError:
    """Translate an SDK exception into a (scrubbed) TransientError or PlayerError."""
    if isinstance(exc, PlayerError):  # already translated (e.g. a stream that ended early)
        return exc
    if isinstance(exc, sdk.APITimeoutError):
        return TransientError(f"{who}: no answer from {url} within {timeout_s:g} s (timeout)")
    if isinstance(exc, transport_errors()):  # raised while a streamed body is being read
        detail = secret_scrub(str(exc))[:ERROR_DETAIL_CHARS] or type(exc).__name__
        return TransientError(f"{who}: the reply stream from {url} broke off: {detail}")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        detail = secret_scrub(str(cause))[:ERROR_DETAIL_CHARS] or type(cause).__name__
        if type(cause).__name__ in READ_ERRORS:  # connected, then the reply broke off
            return TransientError(f"{who}: the reply stream from {url} broke off: {detail}")
        return TransientError(f"{who}: could not connect to {url}: {detail}")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        detail = secret_scrub(str(exc.message))[:ERROR_DETAIL_CHARS]
        # The same overflow inside a stream (status 200) or outside one: the model's failure.
        if overflow_reported(str(exc.message)) or overflow_reported(str(exc.body or "")):
            return ContextOverflow(f"{who}: the request overflowed the model's context window "
                                   f"({url} said: {detail})", status=status if status >= 400
                                   else None)
        if status < 400:  # an `error` event inside a 200 stream (e.g. overloaded mid-reply)
            return TransientError(f"{who}: the reply stream from {url} broke off: {detail}")
        message = f"{who}: HTTP {status} from {url}: {detail}"
        if status in RETRYABLE_STATUSES or status >= 500:
            return TransientError(
                message, status=status, retry_after_s=retry_after_seconds(exc.response.headers)
            )
        return PlayerError(message, status=status)
    if isinstance(exc, sdk.APIResponseValidationError | ValueError):
        return PlayerError(
            f"{who}: {url} answered with a body that is not valid JSON "
            "for this API (is base_url pointing at the right server?)"
        )
    # "… from URL: detail", as above: readers other than staff see neither (error_text.py).
    return PlayerError(
        f"{who}: {type(exc).__name__} from {url}: "
        f"{secret_scrub(str(exc))[:ERROR_DETAIL_CHARS]}"
    )


@dataclass(frozen=True)
class Reading:
    """What an adapter reads from one SDK response (streamed or not).

    `input_tokens` counts every prompt token, cached ones included, whatever the provider's
    own usage fields count.
    """

    text: str
    input_tokens: int
    output_tokens: int
    stop_reason: str
    thinking: str = ""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    id: str = ""
    model: str = ""
    # (tool name, arguments as a JSON string or an object), in the order the reply made them.
    tool_calls: tuple[tuple[str, Any], ...] = ()


class SDKPlayer(ChatPlayer):
    """A ChatPlayer backed by an official SDK; subclasses run one exchange (request + reply)."""

    sdk: ModuleType
    default_url: str = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.policy = RetryPolicy.from_params(self.params)
        for name in SWITCHES:
            if name in self.params and not isinstance(self.params[name], bool):
                raise PlayerError(
                    f"{self.who}: player param {name} must be true or false, "
                    f"got {self.params[name]!r}"
                )

    @property
    def who(self) -> str:
        return f"player {self.name} ({self.provider} {self.model})"

    @property
    def url(self) -> str:
        return self.base_url or self.default_url

    def max_tokens(self, requested: int, messages: list[Message]) -> int:
        """The caller's token limit unless the player's params override it, lowered to what
        `messages` leave of the context window (ContextOverflow when they leave no room)."""
        return fit_max_tokens(messages=messages, max_tokens=int(self.params.get("max_tokens")
                                                                  or requested),
                              window=self.context_window, who=self.who)

    @functools.cached_property
    def context_window(self) -> int | None:
        """Tokens a request may hold (duels.players.context), None when unknown."""
        return player_context_window(provider=self.provider, base_url=self.base_url,
                                     model=self.model, params=self.params)

    def extra_body(self) -> dict[str, Any]:
        """Raw request-body fields from `params["extra_body"]` (e.g. vLLM's `top_k`)."""
        extra = self.params.get("extra_body")
        return dict(extra) if isinstance(extra, dict) else {}

    @property
    def streaming(self) -> bool:
        """Stream replies (the default); `params["stream"] = false` asks for one JSON body."""
        return self.params.get("stream", True) is not False

    @property
    def caching(self) -> bool:
        """Ask for prompt caching (the default); `params["cache"] = false` turns it off."""
        return self.params.get("cache", True) is not False

    def exchange(
        self, messages: list[Message], *, max_tokens: int, temperature: float,
        on_partial: PartialReply | None, cache_key: str, action_tool: bool = False,
    ) -> Reading:
        """Send one request and read its whole reply (streamed or not); SDK errors propagate."""
        raise NotImplementedError

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        on_partial: PartialReply | None = None,
        cache_key: str = "",
        action_tool: bool = False,
    ) -> Completion:
        tries = 0

        def attempt() -> tuple[Reading, int]:
            nonlocal tries
            tries += 1
            if tries > 1 and on_partial is not None:
                on_partial("", "")  # the text streamed by the failed try is void
            started = time.monotonic()
            try:
                reading = self.exchange(
                    messages, max_tokens=max_tokens, temperature=temperature,
                    on_partial=on_partial, cache_key=cache_key, action_tool=action_tool,
                )
            except Exception as exc:
                raise failure_from_sdk_error(
                    exc, sdk=self.sdk, who=self.who, url=self.url, timeout_s=self.policy.timeout_s
                ) from None
            return reading, round((time.monotonic() - started) * 1000)

        (reading, latency_ms), retries = call_with_retries(attempt, policy=self.policy)
        reading, usage_source = usage_completed(reading, messages=messages)
        # A reply with no content (reasoning only, or the token limit reached before any text)
        # is still the model's reply: the reader makes it that turn's format error. Only no
        # reply at all (the errors above) is the infrastructure's.
        action, action_error = (
            action_from_tool_calls(list(reading.tool_calls)) if action_tool else (None, "")
        )
        # `raw` is a JSON-safe summary with the same keys for every provider; never headers.
        raw = {
            "provider": self.provider,
            "id": reading.id,
            "model": reading.model,
            "stop_reason": reading.stop_reason,
            "usage": {
                "input_tokens": reading.input_tokens,
                "output_tokens": reading.output_tokens,
                "cache_read_tokens": reading.cache_read_tokens,
                "cache_write_tokens": reading.cache_write_tokens,
            },
            "usage_source": usage_source,
            "retries": retries,
            "streamed": self.streaming,
            "tool_calls": len(reading.tool_calls),
        }
        return Completion(
            text=reading.text,
            input_tokens=reading.input_tokens,
            output_tokens=reading.output_tokens,
            latency_ms=latency_ms,
            raw=raw,
            thinking=reading.thinking,  # bounded where it is stored (duels.bounds)
            cache_read_tokens=reading.cache_read_tokens,
            cache_write_tokens=reading.cache_write_tokens,
            action=action,
            action_error=action_error,
        )


def usage_completed(reading: Reading, *, messages: list[Message]) -> tuple[Reading, str]:
    """The reading with token counts, and where they come from: `server`, or `estimated` by
    EnvDuels' own count (duels.players.context) when a server sent no usage (llama-cpp-python
    streams none), so budgets, costs and estimates never see a reply of 0 tokens."""
    if reading.input_tokens or reading.output_tokens:
        return reading, "server"
    output = tokens_estimate(reading.text) + tokens_estimate(reading.thinking) + sum(
        tokens_estimate(str(arguments)) for _name, arguments in reading.tool_calls)
    return dataclasses.replace(reading, input_tokens=messages_tokens_estimate(messages),
                               output_tokens=output), "estimated"
