"""Tool calls in both wire formats for the loopback server: whole bodies, streamed deltas, and
the check a real API makes that every tool call in the history is answered by its result."""

from __future__ import annotations

import json
from typing import Any

ANTHROPIC_PATH = "/v1/messages"


def _input(arguments: str) -> Any:
    """Anthropic sends tool input as an object; a test's broken JSON stays a string there."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def anthropic_tool_blocks(calls: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_loopback_{n}", "name": name,
             "input": _input(arguments)} for n, (name, arguments) in enumerate(calls, 1)]


def openai_tool_calls(calls: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    return [{"id": f"call_loopback_{n}", "type": "function",
             "function": {"name": name, "arguments": arguments}}
            for n, (name, arguments) in enumerate(calls, 1)]


def anthropic_tool_events(
    calls: tuple[tuple[str, str], ...], *, first_index: int, chunk_chars: int
) -> list[tuple[str, dict[str, Any], bool]]:
    """content_block_start / input_json_delta pieces / content_block_stop for each call."""
    events: list[tuple[str, dict[str, Any], bool]] = []
    for offset, block in enumerate(anthropic_tool_blocks(calls)):
        index = first_index + offset
        start = dict(block, input={})
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": start}, False))
        arguments = calls[offset][1]
        for at in range(0, len(arguments), max(1, chunk_chars)):
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta",
                          "partial_json": arguments[at:at + chunk_chars]}}, False))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index},
                       False))
    return events


def openai_tool_deltas(
    calls: tuple[tuple[str, str], ...], *, chunk_chars: int
) -> list[dict[str, Any]]:
    """Chat Completions deltas: the call's id and name first, then its arguments in pieces."""
    deltas = []
    for index, call in enumerate(openai_tool_calls(calls)):
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        deltas.append({"tool_calls": [head]})
        arguments = call["function"]["arguments"]
        for at in range(0, len(arguments), max(1, chunk_chars)):
            deltas.append({"tool_calls": [{"index": index, "function": {
                "arguments": arguments[at:at + chunk_chars]}}]})
    return deltas


def tool_history_problem(path: str, request: dict[str, Any]) -> str:
    """What a real API would refuse in the request's history: a tool call not answered by its
    result in the very next message, or a result answering no call ("" when all is well)."""
    messages = request.get("messages") or []
    if path == ANTHROPIC_PATH:
        for position, message in enumerate(messages):
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            called = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            answered = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            before = messages[position - 1].get("content") if position else None
            asked = [b["id"] for b in before if b.get("type") == "tool_use"] if isinstance(
                before, list) else []
            if answered and sorted(answered) != sorted(asked):
                return f"tool_result blocks {answered} answer no tool_use of the turn before"
            if called:
                following = messages[position + 1] if position + 1 < len(messages) else None
                results = following.get("content") if following else None
                ids = [b.get("tool_use_id") for b in results if b.get("type") == "tool_result"
                       ] if isinstance(results, list) else []
                if sorted(ids) != sorted(called):
                    return f"tool_use ids {called} were found without tool_result blocks"
        return ""
    for position, message in enumerate(messages):
        called = [call["id"] for call in message.get("tool_calls") or []]
        following = messages[position + 1: position + 1 + len(called)]
        answered = [m.get("tool_call_id") for m in following if m.get("role") == "tool"]
        if called and sorted(answered) != sorted(called):
            return f"assistant tool_calls {called} must be followed by tool messages"
        if message.get("role") == "tool" and (
                position == 0 or not messages[position - 1].get("tool_calls")
                and messages[position - 1].get("role") != "tool"):
            return "a tool message must answer a preceding message with tool_calls"
    return ""
