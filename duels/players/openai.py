"""OpenAI Chat Completions through the official `openai` SDK, at the player's base URL.

Serves both `openai` and `openai_compatible` players (vLLM, Ollama, llama.cpp servers, gateways).
"""

from __future__ import annotations

from typing import Any

import openai

from duels.players.actions import ACT_TOOL_DESCRIPTION, ACT_TOOL_NAME, ACT_TOOL_SCHEMA
from duels.players.base import Message, PartialReply, PlayerError
from duels.players.chat_completions import openai_messages
from duels.players.retry import TransientError
from duels.players.sdk import Reading, SDKPlayer, api_key_from_env, sdk_client, transport_errors

SYSTEM_ROLES = ("system", "developer", "user")
# Sent to a compatible server that needs no key, so the SDK never falls back to OPENAI_API_KEY and
# a real OpenAI key is never handed to a third-party server.
NO_KEY_PLACEHOLDER = "no-key"
REASONING_FIELDS = ("reasoning_content", "reasoning")


ACT_TOOL = {"type": "function", "function": {
    "name": ACT_TOOL_NAME, "description": ACT_TOOL_DESCRIPTION, "parameters": ACT_TOOL_SCHEMA,
}}


class OpenAIPlayer(SDKPlayer):
    provider = "openai"
    sdk = openai
    default_url = "https://api.openai.com/v1"

    def __init__(self, *, provider: str = "openai", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.provider = provider
        compatible = provider == "openai_compatible"
        if compatible and not self.base_url:
            raise PlayerError(f"{self.who} needs a base_url (the server's /v1 address)")
        api_key = api_key_from_env(
            api_key_env=self.api_key_env, who=self.who, required=not compatible
        )
        self.system_role = self.params.get("system_role", "system")
        if self.system_role not in SYSTEM_ROLES:
            raise PlayerError(f"player param system_role must be one of {', '.join(SYSTEM_ROLES)}")
        self.token_field = self.params.get("max_tokens_param", "max_tokens")
        if self.token_field not in {"max_tokens", "max_completion_tokens"}:
            raise PlayerError(
                "player param max_tokens_param must be max_tokens or max_completion_tokens"
            )
        options: dict[str, Any] = {"base_url": self.base_url} if self.base_url else {}
        self.client = sdk_client(
            openai.OpenAI,
            api_key=api_key or NO_KEY_PLACEHOLDER,
            timeout=self.policy.timeout_s,
            max_retries=0,  # retries are ours (duels.players.retry)
            **options,
        )

    def request(self, messages: list[Message], *, max_tokens: int, temperature: float,
                cache_key: str, action_tool: bool = False) -> dict[str, Any]:
        """The Chat Completions arguments; the messages are sent exactly as built, so one
        episode's requests share a byte-identical prefix that the server can cache. With
        `action_tool` the `act` function is offered."""
        options: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(messages, system_role=self.system_role),
            self.token_field: self.max_tokens(max_tokens, messages),
        }
        chosen_temperature = self.params.get("temperature", temperature)
        if chosen_temperature is not None:  # params {"temperature": null} omits it entirely
            options["temperature"] = float(chosen_temperature)
        if self.params.get("top_p") is not None:
            options["top_p"] = float(self.params["top_p"])
        if self.params.get("stop_sequences"):
            options["stop"] = list(self.params["stop_sequences"])
        if action_tool:
            options["tools"] = [ACT_TOOL]
        # OpenAI routes requests with one key to the same cache; compatible servers may reject
        # the field, so they get it only when their params ask for caching explicitly.
        wants_key = self.provider == "openai" or self.params.get("cache") is True
        if self.caching and cache_key and wants_key:
            options["prompt_cache_key"] = cache_key
        if extra := self.extra_body():
            options["extra_body"] = extra
        return options

    def exchange(
        self, messages: list[Message], *, max_tokens: int, temperature: float,
        on_partial: PartialReply | None, cache_key: str, action_tool: bool = False,
    ) -> Reading:
        options = self.request(
            messages, max_tokens=max_tokens, temperature=temperature, cache_key=cache_key,
            action_tool=action_tool,
        )
        if not self.streaming:
            return self.reading(self.client.chat.completions.create(**options))
        if self.params.get("stream_usage", True) is not False:
            options["stream_options"] = {"include_usage": True}
        text: list[str] = []
        thinking: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [name, arguments so far]
        usage = None
        finish_reason = ""
        ids = {"id": "", "model": ""}
        try:
            for chunk in self.client.chat.completions.create(stream=True, **options):
                ids = {"id": chunk.id or ids["id"], "model": chunk.model or ids["model"]}
                usage = chunk.usage or usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish_reason = choice.finish_reason or finish_reason
                delta = choice.delta
                grew = False
                if delta is not None and delta.content:
                    text.append(delta.content)
                    grew = True
                if delta is not None and (reasoning := reasoning_of(delta)):
                    thinking.append(reasoning)
                    grew = True
                for call in (delta.tool_calls or []) if delta is not None else []:
                    name_and_arguments = calls.setdefault(call.index or 0, ["", ""])
                    if call.function is not None:
                        name_and_arguments[0] += call.function.name or ""
                        name_and_arguments[1] += call.function.arguments or ""
                if grew and on_partial is not None:
                    on_partial("".join(text), "".join(thinking))
        except (openai.APIConnectionError, *transport_errors()) as broken:
            if isinstance(broken, openai.APITimeoutError) or text or thinking or calls:
                raise  # a reply broke off mid-way (or timed out): retried as any dropped stream
            # Dropped before its first word: asked again whole below (a refused connection then
            # fails the same way, and is retried).
            finish_reason = ""
        if not finish_reason and not (text or thinking or calls):
            # A stream that ends (or breaks off) before its first word: llama-cpp-python's way
            # of failing a streamed request (a context overflow among them: an empty 200, or
            # a dropped connection when usage was asked for), the reason only in its own log.
            # Asked again as one whole request, the server answers with its status and words,
            # classified as any error outside a stream.
            options.pop("stream_options", None)
            try:
                return self.reading(self.client.chat.completions.create(**options))
            except openai.APIConnectionError as dropped:
                if isinstance(dropped, openai.APITimeoutError):
                    raise
                # The pooled connection was the one the server was closing after the broken
                # stream (measured with llama-cpp-python: a reset on the same connection, the
                # answer on a new one); httpx has discarded it, so ask once more.
                return self.reading(self.client.chat.completions.create(**options))
        if not finish_reason:
            raise TransientError(
                f"{self.who}: the reply stream from {self.url} ended before a finish_reason"
            )
        return Reading(
            text="".join(text), thinking="".join(thinking), stop_reason=finish_reason,
            tool_calls=tuple((name, arguments) for _index, (name, arguments)
                             in sorted(calls.items())),
            **usage_counts(usage), **ids,
        )

    def reading(self, response: Any) -> Reading:
        """What EnvDuels keeps of one whole (not streamed) response."""
        choice = response.choices[0] if response.choices else None
        message = choice.message if choice else None
        return Reading(
            text=(message.content or "") if message else "",
            thinking=reasoning_of(message) if message else "",
            stop_reason=str(choice.finish_reason or "") if choice else "",
            tool_calls=tuple(
                (str(call.function.name), call.function.arguments or "")
                for call in (getattr(message, "tool_calls", None) or [])
                if getattr(call, "function", None) is not None
            ),
            id=str(getattr(response, "id", "") or ""),
            model=str(getattr(response, "model", "") or ""),
            **usage_counts(response.usage),  # some compatible servers leave usage out
        )


def reasoning_of(message: Any) -> str:
    """Reasoning text a compatible server returns beside the content (vLLM and DeepSeek call
    it `reasoning_content`, Ollama and some gateways `reasoning`)."""
    for name in REASONING_FIELDS:
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def usage_counts(usage: Any) -> dict[str, int]:
    """Prompt, completion and cached-prompt tokens; `prompt_tokens` already counts the cached."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    if cached is None:  # DeepSeek reports its cache hits under its own name
        cached = getattr(usage, "prompt_cache_hit_tokens", 0)
    return {
        "input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        "cache_read_tokens": int(cached or 0),
    }
