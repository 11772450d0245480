"""Validation report of an environment: every check of docs/environments.md, in real sandboxes."""

from __future__ import annotations

import pytest

from duels.engine.validation import CHECK_NAMES, environment_validation_report
from sandbox_runner import SandboxLimits
from tests.sandbox_runner.conftest import first_working_backend
from tests.sandbox_runner.test_open_sandbox import MAZE_ENV

MIB = 1024 * 1024
LIMITS = SandboxLimits(memory_bytes=64 * MIB, call_timeout=1.0, episode_timeout=20.0)
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def any_backend() -> str:
    return first_working_backend()


def report_for(source: str, backend: str, hints: list[str] | None = None) -> dict:
    return environment_validation_report(source=source, hint_texts=hints or ["go south"],
                                         limits=LIMITS, backend=backend)


def checks(report: dict) -> dict[str, bool]:
    return {check["name"]: check["passed"] for check in report["checks"]}


def test_a_good_environment_passes_every_check(any_backend):
    report = report_for(MAZE_ENV, any_backend)
    assert report["valid"] is True, report
    assert report["backend"] == any_backend
    assert report["max_steps"] == 4
    assert [check["name"] for check in report["checks"]] == list(CHECK_NAMES)
    assert all(check["detail"] for check in report["checks"])


def test_reset_that_changes_between_runs_is_caught(any_backend):
    source = MAZE_ENV.replace('return "You are in a maze. Exits: north, south."',
                              'import time\n        return "maze %f" % time.time()')
    report = report_for(source, any_backend)
    assert report["valid"] is False
    assert checks(report)["reset_deterministic"] is False


def test_hint_in_the_reset_text_is_caught(any_backend):
    report = report_for(MAZE_ENV, any_backend, hints=["Exits:   NORTH, south"])
    assert checks(report)["hint_not_in_reset"] is False
    assert report["valid"] is False


def test_reference_solution_that_fails_is_caught(any_backend):
    source = MAZE_ENV.replace('return [random.Random(seed).choice(["north", "south"])]',
                              'return ["east"]')
    report = report_for(source, any_backend)
    assert checks(report)["reference_solution"] is False


def test_junk_action_that_crashes_the_environment_is_caught(any_backend):
    source = MAZE_ENV.replace("if action == self.goal:", "if action == '':\n            raise "
                              "ValueError('empty')\n        if action == self.goal:")
    report = report_for(source, any_backend)
    assert checks(report)["module_loads"] is True
    assert checks(report)["junk_actions"] is False
    assert "ValueError" in next(c for c in report["checks"] if c["name"] == "junk_actions")[
        "detail"]


def test_module_that_does_not_load_fails(any_backend):
    report = report_for("def broken(:\n", any_backend)
    assert checks(report)["module_loads"] is False
    assert report["valid"] is False
    assert report["max_steps"] is None


def test_call_over_the_limits_fails_within_limits(any_backend):
    source = MAZE_ENV.replace("def step(self, action):",
                              "def step(self, action):\n        while True:\n            pass\n"
                              "    def old_step(self, action):")
    report = report_for(source, any_backend)
    assert checks(report)["within_limits"] is False
    assert checks(report)["junk_actions"] is False


def test_source_over_64_kib_is_refused_without_a_sandbox():
    report = environment_validation_report(source="#" * (64 * 1024 + 1), hint_texts=[],
                                           backend="auto")
    assert checks(report)["source_size"] is False
    assert report["valid"] is False
