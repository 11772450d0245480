"""README.md and docs/*.md are a contract: their offline commands run as written, so they
cannot drift.

Every ```sh and ```python block in README.md and in each docs/ page carries a marker on the line
before its fence:

    <!-- readme-test: run -->               run by this test
    <!-- readme-test: skip: REASON -->      not run, and REASON says why (a server, a real key, …)

The `run` blocks of one section of a page (the text under one heading) run in order, in one
shell environment, against a temporary installation of their own (its own SQLite database in a
temporary ENVDUELS_VAR_DIR) prepared the way `make run` prepares one (migrated, built-in players
seeded, an admin login), with the virtualenv active as the README says: what a reader does
following that section. Each section is a test of its own, so the sections of a long page run in
parallel; blocks that use what an earlier block made (a shell variable, a duel to export) belong
in its section. Shell blocks run under `bash -euo pipefail`; Python blocks run in `manage.py
shell`. Blocks inside a longer fence (````text showing a model's answer) are part of that text,
not commands.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.installation import copy_database, migrated_installation
from tests.sandbox_runner.conftest import first_working_backend

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- readme-test: (run|skip: (?P<reason>.+?)) -->$")
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<language>\w*)\s*$")
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
CHECKED_LANGUAGES = {"sh", "bash", "shell", "console", "python"}


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def section_slug(title: str) -> str:
    """The anchor a Markdown viewer gives a heading: `## Duels, figures` -> `duels-figures`."""
    words = re.sub(r"[^\w\s-]", "", title.lower()).split()
    return "-".join(words)


def readme_blocks(text: str) -> list[dict]:
    """Every fenced block: language, code, first line number, its marker (or None) and the
    slug of the heading it is under."""
    lines = text.splitlines()
    blocks, index, section = [], 0, ""
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            if heading := HEADING.match(lines[index]):
                section = section_slug(heading.group("title"))
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
            "section": section,
        })
        index = end + 1
    return blocks


def command_blocks(page: Path) -> list[dict]:
    return [b for b in readme_blocks(page.read_text()) if b["language"] in CHECKED_LANGUAGES]


def test_blocks_know_the_section_they_are_under_and_headings_in_fences_are_text():
    text = ("# Command line\n\n## A duel, and its files\n\n````text\n# not a heading\n"
            "```sh\nls\n```\n````\n\n<!-- readme-test: run -->\n```sh\nls\n```\n"
            "\n### Upkeep\n\n```sh\nls\n```\n")
    blocks = readme_blocks(text)
    assert [block["section"] for block in blocks] == ["a-duel-and-its-files"] * 2 + ["upkeep"]
    assert [block["run"] for block in blocks] == [False, True, False]


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


def installation_env(var_dir: Path) -> dict[str, str]:
    """The environment of a shell with the virtualenv active, for the installation in `var_dir`."""
    venv_bin = Path(sys.executable).parent
    env = {key: value for key, value in os.environ.items()
           if key not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "PYTHONPATH"}}
    env.update({
        # The fastest isolated backend keeps this test short; the commands stay as written.
        "ENVDUELS_SANDBOX": first_working_backend(),
        "ENVDUELS_VAR_DIR": str(var_dir),
        "ENVDUELS_BUILTIN_LATENCY_MS": "0",
        "PATH": f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv_bin.parent),
        "PYTHONPATH": str(ROOT),
    })
    return env


def working_directory(folder: Path) -> Path:
    """A directory that sees the repository's manage.py and docs/ and the virtualenv."""
    folder.mkdir()
    for name, target in (("manage.py", ROOT / "manage.py"), ("docs", ROOT / "docs"),
                         (".venv", Path(sys.executable).parent.parent)):
        (folder / name).symlink_to(target)
    return folder


@pytest.fixture(scope="session")
def prepared_var_dir(tmp_path_factory) -> Path:
    """ENVDUELS_VAR_DIR as `make run` leaves it (migrated, built-in players, an admin login),
    prepared by the real commands once per test run: every section's installation is a copy, so
    none pays another Django start-up for it. pytest-xdist workers share the run's temporary
    directory, and a file lock lets one of them prepare it while the others wait."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder, var_dir = shared / "readme-installation", shared / "readme-installation" / "var"
    folder.mkdir(exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "prepared").exists():
            shutil.rmtree(var_dir, ignore_errors=True)
            shutil.rmtree(folder / "work", ignore_errors=True)
            migrated_installation(var_dir)  # what `migrate` leaves, made once per migrations
            prepare = ("from django.core.management import call_command\n"
                       "call_command('seed_builtin')\ncall_command('ensure_admin')\n")
            done = subprocess.run(["python", "manage.py", "shell", "-c", prepare],
                                  cwd=working_directory(folder / "work"),
                                  env=installation_env(var_dir), capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, done.stderr
            (folder / "prepared").touch()
    return var_dir


def copy_var_dir(*, source: Path, target: Path) -> None:
    """A copy of an installation's files: its database consistently, the rest as files."""
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.name == "envduels.sqlite3":
            copy_database(source=path, target=target / path.name)
        elif path.is_file() and not path.name.startswith("envduels.sqlite3"):
            shutil.copy2(path, target / path.name)  # the secret key, the first login


@pytest.fixture
def installation(tmp_path, prepared_var_dir):
    """A fresh installation as `make run` leaves it, and a shell environment with the
    virtualenv active; the working directory sees the repository's manage.py and docs/."""
    copy_var_dir(source=prepared_var_dir, target=tmp_path / "var")
    return working_directory(tmp_path / "work"), installation_env(tmp_path / "var")


def run_sections() -> list:
    """One parameter per section of a page with `run` blocks: its blocks, in page order."""
    sections = []
    for page in PAGES:
        grouped: dict[str, list[dict]] = {}
        for block in command_blocks(page):
            if block["run"]:
                grouped.setdefault(block["section"], []).append(block)
        sections += [pytest.param(page, blocks, id=f"{page_id(page)}#{slug}")
                     for slug, blocks in grouped.items()]
    return sections


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("page", "blocks"), run_sections())
def test_offline_blocks_run_as_written(installation, page, blocks):
    work, env = installation
    shell_state = work / ".readme-env"
    shell_state.write_text("")
    for block in blocks:
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
