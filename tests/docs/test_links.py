"""Every relative link in README.md and docs/ points to a file that exists in the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # web addresses and anchors within the page
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_the_docs_the_code_points_to_exist():
    """Messages, docstrings and comments that send a reader to docs/ name a real page."""
    named: dict[str, str] = {}
    for folder in ("duels", "sandbox_runner", "envduels_site", "templates", "scripts", "tests"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in {".py", ".html"} or "__pycache__" in path.parts:
                continue
            for name in re.findall(r"docs/([a-z0-9_-]+\.md)", path.read_text(errors="ignore")):
                named.setdefault(name, str(path.relative_to(ROOT)))
    assert {"environments.md", "exchange-format.md", "json-outputs.md"} <= set(named)
    missing = {name: where for name, where in named.items() if not (ROOT / "docs" / name).is_file()}
    assert not missing, f"pointers to missing docs pages: {missing}"
