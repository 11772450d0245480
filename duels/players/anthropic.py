"""Anthropic Messages API through the official `anthropic` SDK, at the player's base URL."""

from __future__ import annotations

from typing import Any

import anthropic

from duels.players.base import Message
from duels.players.sdk import Reading, SDKPlayer, api_key_from_env

LEGACY_SAMPLING = ("temperature", "top_p", "top_k")


def anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    """Split chat messages into Anthropic's `system` text and alternating user/assistant turns.

    System messages (anywhere) are joined into `system`; consecutive same-role messages are merged,
    since the Messages API requires the roles to alternate.
    """
    system_parts: list[str] = []
    turns: list[dict[str, str]] = []
    for message in messages:
        if message["role"] == "system":
            system_parts.append(message["content"])
            continue
        role = "assistant" if message["role"] == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": f"{turns[-1]['content']}\n\n{message['content']}"}
        else:
            turns.append({"role": role, "content": message["content"]})
    return "\n\n".join(system_parts), turns


class AnthropicPlayer(SDKPlayer):
    provider = "anthropic"
    sdk = anthropic
    default_url = "https://api.anthropic.com"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = anthropic.Anthropic(
            api_key=api_key_from_env(api_key_env=self.api_key_env, who=self.who),
            base_url=self.base_url or None,
            timeout=self.policy.timeout_s,
            max_retries=0,  # retries are ours (duels.players.retry)
        )

    def send(self, messages: list[Message], *, max_tokens: int, temperature: float) -> Any:
        # The Messages API of this SDK takes no sampling knobs (temperature, top_p, top_k), so the
        # caller's temperature is not sent. Params that name them are passed as raw body fields
        # for endpoints and gateways that still accept them; `effort` maps to output_config.
        system, turns = anthropic_messages(messages)
        options: dict[str, Any] = {"max_tokens": self.max_tokens(max_tokens)}
        if system:
            options["system"] = system
        if self.params.get("effort"):
            options["output_config"] = {"effort": self.params["effort"]}
        if self.params.get("stop_sequences"):
            options["stop_sequences"] = list(self.params["stop_sequences"])
        extra = {
            name: self.params[name] for name in LEGACY_SAMPLING if self.params.get(name) is not None
        }
        extra.update(self.extra_body())
        if extra:
            options["extra_body"] = extra
        return self.client.messages.create(model=self.model, messages=turns, **options)

    def read(self, response: Any) -> Reading:
        blocks = response.content or []
        usage = response.usage
        return Reading(
            text="".join(block.text for block in blocks if getattr(block, "type", "") == "text"),
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            stop_reason=str(response.stop_reason or ""),
        )
