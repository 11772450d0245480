"""Read the examples the docs show, so tests can hold real output to them."""

from __future__ import annotations

import json
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def documented_json(page: str, heading: str) -> dict:
    """The first ```json block under the `## heading` of docs/`page`, parsed."""
    text = (DOCS / page).read_text()
    start = text.index(f"## {heading}\n")
    block = re.search(r"```json\n(.*?)\n```", text[start:], re.S)
    assert block, f"docs/{page} shows no JSON under {heading!r}"
    return json.loads(block.group(1))


def key_paths(value, prefix: str = "") -> set[str]:
    """Every key path of nested objects (`a.player`), lists looked into at their first item."""
    if isinstance(value, list):
        return key_paths(value[0], prefix + "[]") if value and isinstance(value[0], dict) else set()
    if not isinstance(value, dict):
        return set()
    paths = set()
    for key, item in value.items():
        path = f"{prefix}.{key}" if prefix else key
        paths |= {path} | key_paths(item, path)
    return paths
