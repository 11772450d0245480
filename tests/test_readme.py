"""README.md and docs/*.md are a contract: their offline commands run as written, so they
cannot drift.

Every ```sh and ```python block in README.md and in each docs/ page carries a marker on the line
before its fence:

    <!-- readme-test: run -->               run by this test
    <!-- readme-test: skip: REASON -->      not run, and REASON says why (a server, a real key, …)

The `run` blocks of one page run in order, in one shell environment, against a temporary
installation of their own (its own SQLite database in a temporary ENVDUELS_VAR_DIR) prepared the
way `make run` prepares one (migrated, built-in players seeded, an admin login), with the
virtualenv active as the README says. Shell blocks run under `bash -euo pipefail`; Python blocks
run in `manage.py shell`. Blocks inside a longer fence (````text showing a model's answer) are
part of that text, not commands.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.installation import migrated_installation
from tests.sandbox_runner.conftest import first_working_backend

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- readme-test: (run|skip: (?P<reason>.+?)) -->$")
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<language>\w*)\s*$")
CHECKED_LANGUAGES = {"sh", "bash", "shell", "console", "python"}


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def readme_blocks(text: str) -> list[dict]:
    """Every fenced block: language, code, first line number, and its marker (or None)."""
    lines = text.splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence = opening.group("fence")
        end = next((i for i in range(index + 1, len(lines)) if lines[i].rstrip() == fence),
                   len(lines))
        previous = lines[index - 1].strip() if index else ""
        marker = MARKER.match(previous)
        blocks.append({
            "language": opening.group("language"), "line": index + 1,
            "code": "\n".join(lines[index + 1:end]) + "\n",
            "run": bool(marker and marker.group(1) == "run"),
            "marked": bool(marker), "reason": marker.group("reason") if marker else None,
        })
        index = end + 1
    return blocks


def command_blocks(page: Path) -> list[dict]:
    return [b for b in readme_blocks(page.read_text()) if b["language"] in CHECKED_LANGUAGES]


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_block_says_whether_it_runs_offline(page):
    blocks = command_blocks(page)
    unmarked = [block["line"] for block in blocks if not block["marked"]]
    assert not unmarked, (
        f"{page_id(page)} blocks at lines {unmarked} lack a '<!-- readme-test: run -->' or "
        "'<!-- readme-test: skip: REASON -->' marker (see tests/test_readme.py)"
    )
    assert all(block["run"] or block["reason"].strip() for block in blocks)


def test_the_readme_and_the_command_line_page_run_their_main_commands():
    assert sum(block["run"] for block in command_blocks(README)) >= 2
    assert sum(block["run"] for block in command_blocks(ROOT / "docs" / "command-line.md")) >= 1


def test_the_readme_explains_its_markers_and_the_virtualenv():
    text = README.read_text()
    assert "readme-test: run" in text and "tests/test_readme.py" in text
    assert ". .venv/bin/activate" in text


@pytest.fixture
def installation(tmp_path):
    """A fresh installation as `make run` leaves it, and a shell environment with the
    virtualenv active; the working directory sees the repository's manage.py and docs/."""
    work = tmp_path / "work"
    work.mkdir()
    venv_bin = Path(sys.executable).parent
    for name, target in (("manage.py", ROOT / "manage.py"), ("docs", ROOT / "docs"),
                         (".venv", venv_bin.parent)):
        (work / name).symlink_to(target)
    env = {key: value for key, value in os.environ.items()
           if key not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "PYTHONPATH"}}
    env.update({
        # The fastest isolated backend keeps this test short; the commands stay as written.
        "ENVDUELS_SANDBOX": first_working_backend(),
        "ENVDUELS_VAR_DIR": str(tmp_path / "var"),
        "ENVDUELS_BUILTIN_LATENCY_MS": "0",
        "PATH": f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv_bin.parent),
        "PYTHONPATH": str(ROOT),
    })
    migrated_installation(tmp_path / "var")  # what `migrate` leaves, made once per run
    prepare = ("from django.core.management import call_command\n"
               "call_command('seed_builtin')\ncall_command('ensure_admin')\n")
    done = subprocess.run(["python", "manage.py", "shell", "-c", prepare], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return work, env


RUNNABLE = [page for page in PAGES if any(block["run"] for block in command_blocks(page))]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", RUNNABLE, ids=page_id)
def test_offline_blocks_run_as_written(installation, page):
    work, env = installation
    shell_state = work / ".readme-env"
    shell_state.write_text("")
    for block in command_blocks(page):
        if not block["run"]:
            continue
        if block["language"] == "python":
            command = ["python", "manage.py", "shell", "--verbosity", "0"]
            stdin = block["code"]
        else:
            # One shell session across blocks: variables a block sets (TOKEN=…) stay set.
            script = (f"set -euo pipefail\nset -a\n. {shell_state}\nset +a\n{block['code']}"
                      f"export -p > {shell_state}\n")
            command, stdin = ["bash", "-c", script], None
        done = subprocess.run(command, cwd=work, env=env, input=stdin, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, (
            f"{page_id(page)} block at line {block['line']} failed (exit {done.returncode}):\n"
            f"{block['code']}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n"
            f"{done.stderr[-3000:]}"
        )
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
