"""docs/architecture.md stays true: its paths exist, it names every room, and its layers are the
ones tests/duels/test_layers.py enforces, in the same order."""

from __future__ import annotations

import re
from pathlib import Path

from tests.duels.test_layers import LADDER

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"`((?:duels|sandbox_runner|envduels_site|tests|templates|static)/[\w./-]*)`")


def _rooms() -> set[str]:
    return {f"duels/{path.name}/" for path in (ROOT / "duels").iterdir()
            if path.is_dir() and path.name not in {"migrations", "__pycache__"}
            and any(path.rglob("*.py"))}


def test_every_path_on_the_page_exists():
    named = PATH.findall(PAGE.read_text())
    assert len(named) > 30
    missing = [path for path in named if not (ROOT / path).exists()]
    assert missing == [], f"docs/architecture.md names missing paths: {missing}"


def test_the_page_names_every_room_of_duels():
    text = PAGE.read_text()
    assert {"duels/engine/", "duels/forms/", "duels/publishing/"} <= _rooms()
    unnamed = sorted(room for room in _rooms() if f"`{room}`" not in text)
    assert unnamed == [], f"rooms missing from docs/architecture.md: {unnamed}"


def test_the_layers_on_the_page_are_the_tested_ones():
    section = PAGE.read_text().split("## The layers", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\d+\. \*\*(\w+)\*\*", section, flags=re.MULTILINE)
    assert listed == [name for name, _ in LADDER]
    for name, prefixes in LADDER:
        item = re.split(r"\n\d+\. |\n\n", section.split(f"**{name}**", 1)[1], maxsplit=1)[0]
        for prefix in prefixes:
            path = prefix.replace(".", "/")
            assert f"`{path}/`" in item or f"`{path}.py`" in item, (name, prefix)


def test_the_root_modules_are_the_ones_the_page_allows():
    text = PAGE.read_text().split("## The rooms", 1)[0]
    allowed = {Path(path).name for path in PATH.findall(text) if path.count("/") == 1}
    present = {path.name for path in (ROOT / "duels").glob("*.py")} - {"__init__.py"}
    assert present <= allowed, f"loose modules the page does not explain: {present - allowed}"
