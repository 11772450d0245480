"""The one interface every chat model speaks, whatever its provider."""

from __future__ import annotations

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
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    raw: dict[str, Any] = field(default_factory=dict)


Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


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
        self, messages: list[Message], *, max_tokens: int = 1024, temperature: float = 0.0
    ) -> Completion:
        raise NotImplementedError
