"""The complete environment in docs/ passes the real validation, and its walkthrough runs."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from duels.engine.validation import CHECK_NAMES, environment_validation_report
from sandbox_runner import SandboxLimits
from sandbox_runner.transcript import sandbox_transcript
from tests.sandbox_runner.conftest import first_working_backend

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE = DOCS / "examples" / "dial_lock.py"
ACTIONS = DOCS / "examples" / "dial_lock_actions.txt"
HINT = "Change one dial at a time and watch whether the count of right dials goes up or down."
LIMITS = SandboxLimits(memory_bytes=128 * 1024 * 1024, call_timeout=5.0, episode_timeout=60.0)
pytestmark = pytest.mark.timeout(180)


def test_the_documented_example_passes_every_validation_check():
    report = environment_validation_report(source=EXAMPLE.read_text(), hint_texts=[HINT],
                                           limits=LIMITS, backend=first_working_backend())
    assert report["valid"] is True, report
    assert [check["name"] for check in report["checks"]] == list(CHECK_NAMES)
    assert report["max_steps"] == 30


def test_the_documented_actions_solve_seed_zero():
    transcript = sandbox_transcript(code=EXAMPLE.read_text(), seed=0,
                                    actions=ACTIONS.read_text().splitlines(), limits=LIMITS,
                                    backend=first_working_backend())
    assert transcript["error"] is None, transcript["error"]
    assert transcript["success"] is True
    assert transcript["steps"][0]["done"] is False  # the junk action gets a well-formed answer


def test_the_environments_page_shows_the_example_file_as_it_is():
    """docs/environments.md embeds the example; the embedded copy must not drift."""
    page = (DOCS / "environments.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    assert EXAMPLE.read_text() in blocks
    for check in CHECK_NAMES:
        assert f"`{check}`" in page, f"docs/environments.md does not explain {check}"


def test_a_contract_error_names_the_docs_and_the_backend_is_reported(tmp_path):
    """The error a hand writer hits first (no max_steps) points to the contract's page, and
    `sandbox_run --json` names the backend even though the environment never loaded."""
    source = EXAMPLE.read_text().replace("    max_steps = 30", "    pass", 1)
    path = tmp_path / "no_max_steps.py"
    path.write_text(source)
    backend = first_working_backend()
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("sandbox_run", str(path), "--backend", backend, "--json", stdout=out,
                     stderr=StringIO())
    transcript = json.loads(out.getvalue())
    assert transcript["backend"] == backend
    message = transcript["error"]["message"]
    assert "max_steps must be an int from 1 to 200, got None" in message
    assert "see docs/environments.md" in message


def test_sandbox_run_text_shows_unknown_max_steps_as_a_dash(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('broken on purpose')\n")
    backend = first_working_backend()
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("sandbox_run", str(path), "--backend", backend, stdout=out,
                     stderr=StringIO())
    assert out.getvalue().splitlines()[0] == f"backend {backend}, seed 0, max_steps —"
