"""The Chat Completions form of a chat, without the `openai` SDK.

Training exports write solver chats in this form and OpenAI-compatible players send it; the SDK
costs over a second of imports, so the conversion lives apart from the player and a command that
only exports never imports it.
"""

from __future__ import annotations

import json
from typing import Any

from duels.players.actions import ACT_TOOL_NAME
from duels.players.base import Message


def openai_messages(
    messages: list[Message], *, system_role: str = "system"
) -> list[dict[str, Any]]:
    """Return the chat in Chat Completions form.

    `system_role` "developer" renames system messages (OpenAI reasoning models); "user" folds
    them into the first user message, for servers whose chat template has no system role. An
    assistant message with an `action` (the tool protocol) carries it as a call of `act`, and
    the next user message becomes that call's `tool` result.
    """
    chat: list[dict[str, Any]] = []
    calls = 0
    answering = ""  # the tool call id the next user message answers
    for message in messages:
        role, content = message["role"], message["content"]
        if role == "system" and system_role != "user":
            chat.append({"role": system_role, "content": content})
        elif role == "assistant" and message.get("action") is not None:
            calls += 1
            answering = f"call_{calls}"
            chat.append({"role": "assistant", "content": content or None, "tool_calls": [{
                "id": answering, "type": "function",
                "function": {"name": ACT_TOOL_NAME,
                             "arguments": json.dumps({"action": message["action"]})},
            }]})
        elif role == "user" and answering:
            chat.append({"role": "tool", "tool_call_id": answering, "content": content})
            answering = ""
        else:
            chat.append({"role": role, "content": content})
    if system_role != "user":
        return chat
    system_text = "\n\n".join(m["content"] for m in chat if m["role"] == "system")
    chat = [m for m in chat if m["role"] != "system"]
    if system_text:
        first_user = next((m for m in chat if m["role"] == "user"), None)
        if first_user is None:
            chat.insert(0, {"role": "user", "content": system_text})
        else:
            first_user["content"] = f"{system_text}\n\n{first_user['content']}"
    return chat
