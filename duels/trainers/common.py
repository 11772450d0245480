"""What every trainer export shares: escaped README text, the vendored sandbox runner, the
install note, and writing a directory whole.

Titles, authors and hints are written by models or imported from files: in a README they are
escaped (HTML, Markdown emphasis, links, code and table syntax), never rendered as markup.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SANDBOX_RUNNER = ROOT / "sandbox_runner"
# The runner's Django glue stays behind: the copy runs without Django (env vars configure it).
VENDOR_IGNORE = shutil.ignore_patterns("management", "apps.py", "__pycache__", "*.pyc")
# Emphasis, code, links and table cells; `<`, `>` and `&` are HTML-escaped first.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]|~])")


class PackageError(Exception):
    """A package cannot be written as asked; the message says what to change."""


def markdown_text(value: str | None, *, limit: int = 200) -> str:
    """`value` as inert Markdown text on one line: HTML escaped, Markdown syntax backslashed."""
    text = " ".join(str(value or "").split())
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=True))


def installation_reference() -> str:
    """A pinned reference to the EnvDuels that writes an export: path and git commit."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{ROOT.as_uri()}" + (f" (git commit {commit})" if commit else "")


def installation_requirement() -> str:
    """A direct reference to this EnvDuels installation (never the bare name on an index)."""
    return f"envduels @ {ROOT.as_uri()}"


def sandbox_runner_vendor(*, into: Path) -> Path:
    """Copy EnvDuels' sandbox runner (standard library only, Django glue left out) to
    `into/sandbox_runner`; return that path."""
    target = into / "sandbox_runner"
    shutil.copytree(SANDBOX_RUNNER, target, ignore=VENDOR_IGNORE)
    return target


def directory_write(*, out: Path, fill: Callable[[Path], None]) -> Path:
    """Build a directory with `fill(staging)` next to `out`, then move it into place whole
    (a failed export leaves nothing behind)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PackageError(f"{out} already exists and is not an empty directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".envduels-package-", dir=out.parent))
    try:
        fill(staging)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
