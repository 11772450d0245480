"""The one interface every chat model speaks, whatever its provider."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class PlayerError(Exception):
    """A model could not be reached or answered unusably; the message says what to fix."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


@dataclass(frozen=True)
class Completion:
    """One reply. `input_tokens` counts every prompt token, the cached ones included;
    `cache_read_tokens` and `cache_write_tokens` say how many of them were read from or
    written to the provider's prompt cache. `thinking` is reasoning returned apart from the
    reply (Anthropic thinking blocks, `reasoning_content`). When the `act` tool was offered,
    `action` is the action of the reply's one well-formed `act` call, else None and
    `action_error` says what was wrong with the reply's tool calls."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    raw: dict[str, Any] = field(default_factory=dict)
    thinking: str = ""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    action: str | None = None
    action_error: str = ""


# Called while a reply streams in, with (reply so far, thinking so far); ("", "") means the
# reply starts over (a dropped stream is being retried).
PartialReply = Callable[[str, str], None]


# {"role": "system"|"user"|"assistant", "content": str}; an assistant message of the tool action
# protocol also has "action", the action it sent through the `act` tool.
Message = dict[str, str]


class ChatPlayer:
    """Base class of the provider adapters. Subclasses implement `complete`."""

    provider: str = ""

    def __init__(
        self,
        *,
        name: str,
        model: str,
        base_url: str = "",
        api_key_env: str = "",
        params: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.params = dict(params or {})

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
        """Return the model's reply to `messages`.

        `on_partial` receives the reply as it streams in; `cache_key` names the conversation
        (one per episode) so providers that route by it keep its prompt prefix cached;
        `action_tool` offers the `act` tool (the tool action protocol, duels.players.actions)
        and reads its call into the Completion's `action`.
        """
        raise NotImplementedError
