"""The prompt caches of both providers, emulated for the loopback server.

Tokens are counted as 4 characters each. Anthropic: a request reads the longest prefix that an
earlier request marked with a `cache_control` breakpoint and writes up to its own last
breakpoint. OpenAI: every prefix of whole messages is cached per `prompt_cache_key`, and a
request reads the longest one seen before.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    input_tokens: int  # every prompt token, cached ones included
    output_tokens: int
    cache_read: int = 0
    cache_write: int = 0


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _digest(items: list[Any]) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()


class PromptCache:
    """Both providers' prompt caches, emulated from what a request carries."""

    def __init__(self) -> None:
        self.entries: set[str] = set()

    def anthropic(self, request: dict[str, Any]) -> tuple[int, int, int]:
        """(prompt tokens, read, written): reads the longest cached breakpoint prefix, writes
        up to the last breakpoint."""
        blocks: list[tuple[dict[str, Any], bool]] = []
        system = request.get("system") or []
        for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
            blocks.append((block, "cache_control" in block))
        for message in request.get("messages", []):
            content = message["content"]
            items = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in items:
                blocks.append(({**block, "role": message["role"]}, "cache_control" in block))
        plain = [{k: v for k, v in block.items() if k != "cache_control"} for block, _ in blocks]
        totals = list(
            itertools.accumulate(count_tokens(b.get("text", "")) for b in plain)
        )
        keys = [_digest(plain[: i + 1]) for i in range(len(plain))]
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        total = totals[-1] if totals else 0
        if not marks:
            return total, 0, 0
        hits = [i for i in range(marks[-1] + 1) if keys[i] in self.entries]
        read = totals[max(hits)] if hits else 0
        written = totals[marks[-1]] - read
        self.entries.update(keys[i] for i in marks)
        return total, read, written

    def openai(self, request: dict[str, Any]) -> tuple[int, int]:
        """(prompt tokens, cached): the longest prefix of whole messages seen before."""
        scope = request.get("prompt_cache_key", "")
        messages = request.get("messages", [])
        totals = list(
            itertools.accumulate(count_tokens(m.get("content") or "")
                                               for m in messages)
        )
        keys = [_digest([scope, messages[: i + 1]]) for i in range(len(messages))]
        hits = [i for i in range(len(keys) - 1) if keys[i] in self.entries]
        self.entries.update(keys)
        return (totals[-1] if totals else 0), (totals[max(hits)] if hits else 0)
