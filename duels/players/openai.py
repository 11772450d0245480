"""OpenAI Chat Completions through the official `openai` SDK, at the player's base URL.

Serves both `openai` and `openai_compatible` players (vLLM, Ollama, llama.cpp servers, gateways).
"""

from __future__ import annotations

from typing import Any

import openai

from duels.players.base import Message, PlayerError
from duels.players.sdk import Reading, SDKPlayer, api_key_from_env

SYSTEM_ROLES = ("system", "developer", "user")
# Sent to a compatible server that needs no key, so the SDK never falls back to OPENAI_API_KEY and
# a real OpenAI key is never handed to a third-party server.
NO_KEY_PLACEHOLDER = "no-key"


def openai_messages(
    messages: list[Message], *, system_role: str = "system"
) -> list[dict[str, str]]:
    """Return the chat in Chat Completions form.

    `system_role` "developer" renames system messages (OpenAI reasoning models); "user" folds
    them into the first user message, for servers whose chat template has no system role.
    """
    if system_role != "user":
        return [
            {"role": system_role if m["role"] == "system" else m["role"], "content": m["content"]}
            for m in messages
        ]
    system_text = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    chat = [dict(m) for m in messages if m["role"] != "system"]
    if system_text:
        first_user = next((m for m in chat if m["role"] == "user"), None)
        if first_user is None:
            chat.insert(0, {"role": "user", "content": system_text})
        else:
            first_user["content"] = f"{system_text}\n\n{first_user['content']}"
    return chat


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
        self.client = openai.OpenAI(
            api_key=api_key or NO_KEY_PLACEHOLDER,
            timeout=self.policy.timeout_s,
            max_retries=0,  # retries are ours (duels.players.retry)
            **options,
        )

    def send(self, messages: list[Message], *, max_tokens: int, temperature: float) -> Any:
        options: dict[str, Any] = {self.token_field: self.max_tokens(max_tokens)}
        chosen_temperature = self.params.get("temperature", temperature)
        if chosen_temperature is not None:  # params {"temperature": null} omits it entirely
            options["temperature"] = float(chosen_temperature)
        if self.params.get("top_p") is not None:
            options["top_p"] = float(self.params["top_p"])
        if self.params.get("stop_sequences"):
            options["stop"] = list(self.params["stop_sequences"])
        if extra := self.extra_body():
            options["extra_body"] = extra
        chat = openai_messages(messages, system_role=self.system_role)
        return self.client.chat.completions.create(model=self.model, messages=chat, **options)

    def read(self, response: Any) -> Reading:
        choice = response.choices[0] if response.choices else None
        usage = response.usage  # some compatible servers leave it out
        return Reading(
            text=(choice.message.content or "") if choice and choice.message else "",
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            stop_reason=str(choice.finish_reason or "") if choice else "",
        )
