"""Anthropic Messages API through the official `anthropic` SDK, at the player's base URL."""

from __future__ import annotations

from typing import Any

import anthropic

from duels.players.actions import ACT_TOOL_DESCRIPTION, ACT_TOOL_NAME, ACT_TOOL_SCHEMA
from duels.players.base import Message, PartialReply, PlayerError
from duels.players.retry import TransientError
from duels.players.sdk import Reading, SDKPlayer, api_key_from_env, sdk_client

LEGACY_SAMPLING = ("temperature", "top_p", "top_k")
MIN_THINKING_BUDGET = 1024  # the Messages API's smallest thinking budget
EPHEMERAL = {"type": "ephemeral"}


def anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Split chat messages into Anthropic's `system` text and alternating user/assistant turns.

    System messages (anywhere) are joined into `system`; consecutive same-role messages are merged,
    since the Messages API requires the roles to alternate. An assistant message with an
    `action` (the tool protocol) becomes its text plus a `tool_use` block of `act`, and the next
    user message the matching `tool_result`.
    """
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    calls = 0
    answering = ""  # the tool_use id the next user message answers
    for message in messages:
        if message["role"] == "system":
            system_parts.append(message["content"])
            continue
        role = "assistant" if message["role"] == "assistant" else "user"
        content: str | list[dict[str, Any]] = message["content"]
        if role == "assistant" and message.get("action") is not None:
            calls += 1
            answering = f"act_{calls}"
            content = [{"type": "text", "text": message["content"]}] if message["content"] else []
            content.append({"type": "tool_use", "id": answering, "name": ACT_TOOL_NAME,
                            "input": {"action": message["action"]}})
        elif role == "user" and answering:
            content = [{"type": "tool_result", "tool_use_id": answering,
                        "content": message["content"]}]
            answering = ""
        if turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": _joined(turns[-1]["content"], content)}
        else:
            turns.append({"role": role, "content": content})
    return "\n\n".join(system_parts), turns


def _blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _joined(first: str | list[dict[str, Any]], second: str | list[dict[str, Any]]):
    """Two contents of one role as one: text joined by a blank line, blocks concatenated."""
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _blocks(first) + _blocks(second)


def cache_breakpoints(
    system: str, turns: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Mark the stable prefix with cache breakpoints: the system prompt (with the hint), the
    end of what the previous request sent (read from the cache now), and the end of this one
    (written for the next turn). Three of the four breakpoints a request may carry."""
    system_blocks = [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if system else []
    marked: list[dict[str, Any]] = [dict(turn) for turn in turns]
    last_reply = max(i for i, turn in enumerate(turns) if turn["role"] == "assistant")
    for index in {len(turns) - 1, last_reply - 1}:
        if index >= 0:
            blocks = [dict(block) for block in _blocks(turns[index]["content"])]
            blocks[-1]["cache_control"] = EPHEMERAL
            marked[index]["content"] = blocks
    return system_blocks, marked


ACT_TOOL = {"name": ACT_TOOL_NAME, "description": ACT_TOOL_DESCRIPTION,
            "input_schema": ACT_TOOL_SCHEMA}


class AnthropicPlayer(SDKPlayer):
    provider = "anthropic"
    sdk = anthropic
    default_url = "https://api.anthropic.com"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = sdk_client(
            anthropic.Anthropic,
            api_key=api_key_from_env(api_key_env=self.api_key_env, who=self.who),
            base_url=self.base_url or None,
            timeout=self.policy.timeout_s,
            max_retries=0,  # retries are ours (duels.players.retry)
        )

    def thinking_config(self) -> dict[str, Any] | None:
        """`params["thinking"]`: a token budget (int, at least 1024) or an Anthropic object."""
        value = self.params.get("thinking")
        if value in (None, False, 0):
            return None
        if isinstance(value, dict):
            return dict(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < MIN_THINKING_BUDGET:
            raise PlayerError(
                f"{self.who}: player param thinking must be a token budget of at least "
                f"{MIN_THINKING_BUDGET} (or an Anthropic thinking object), got {value!r}"
            )
        return {"type": "enabled", "budget_tokens": value}

    def request(
        self, messages: list[Message], *, max_tokens: int, action_tool: bool = False
    ) -> dict[str, Any]:
        """The Messages API arguments for `messages`, with cache breakpoints from turn two;
        with `action_tool`, the `act` tool is offered."""
        # The Messages API of this SDK takes no sampling knobs (temperature, top_p, top_k), so the
        # caller's temperature is not sent. Params that name them are passed as raw body fields
        # for endpoints and gateways that still accept them; `effort` maps to output_config.
        system, turns = anthropic_messages(messages)
        options: dict[str, Any] = {
            "model": self.model, "max_tokens": self.max_tokens(max_tokens, messages),
            "messages": turns,
        }
        if self.caching and any(turn["role"] == "assistant" for turn in turns):
            system, options["messages"] = cache_breakpoints(system, turns)
        if system:
            options["system"] = system
        if action_tool:
            options["tools"] = [ACT_TOOL]
        if thinking := self.thinking_config():
            options["thinking"] = thinking
            budget = int(thinking.get("budget_tokens") or 0)
            if options["max_tokens"] <= budget:  # the reply needs room after the thinking
                options["max_tokens"] += budget
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
        return options

    def exchange(
        self, messages: list[Message], *, max_tokens: int, temperature: float,
        on_partial: PartialReply | None, cache_key: str, action_tool: bool = False,
    ) -> Reading:
        options = self.request(messages, max_tokens=max_tokens, action_tool=action_tool)
        if not self.streaming:
            return self.reading(self.client.messages.create(**options))
        text = thinking = ""
        finished = False
        with self.client.messages.stream(**options) as stream:
            for event in stream:
                if event.type == "text":
                    text = event.snapshot
                elif event.type == "thinking":
                    thinking = event.snapshot
                elif event.type == "message_stop":
                    finished = True
                    continue
                else:
                    continue
                if on_partial is not None:
                    on_partial(text, thinking)
            if not finished:
                raise TransientError(
                    f"{self.who}: the reply stream from {self.url} ended before the message did"
                )
            return self.reading(stream.get_final_message())

    def reading(self, message: Any) -> Reading:
        """What EnvDuels keeps of one whole message; input counts cached tokens too."""
        blocks = message.content or []
        usage = message.usage
        cache_read = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        cache_write = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        return Reading(
            text="".join(block.text for block in blocks if getattr(block, "type", "") == "text"),
            thinking="\n\n".join(
                block.thinking for block in blocks if getattr(block, "type", "") == "thinking"
            ),
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0) + cache_read + cache_write,
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            stop_reason=str(message.stop_reason or ""),
            tool_calls=tuple(
                (str(block.name), block.input)
                for block in blocks if getattr(block, "type", "") == "tool_use"
            ),
            id=str(getattr(message, "id", "") or ""),
            model=str(getattr(message, "model", "") or ""),
        )
