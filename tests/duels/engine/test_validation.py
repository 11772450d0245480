"""Validation report of an environment: every check of docs/environments.md, in real sandboxes."""

from __future__ import annotations

import re

import pytest

from duels.engine.validation import CHECK_NAMES, environment_validation_report
from sandbox_runner import SandboxLimits
from sandbox_runner.versions import sandbox_python_version
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
    assert checks(report)["deterministic"] is False


def test_hint_in_the_reset_text_is_caught(any_backend):
    report = report_for(MAZE_ENV, any_backend, hints=["Exits:   NORTH, south"])
    assert checks(report)["hint_not_leaked"] is False
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


def kill_from_outside(sandbox) -> None:
    """SIGKILL the sandbox as a restarted engine or an operator would, behind the host's back."""
    import os
    import signal
    import time

    process = sandbox.process
    if hasattr(process, "popen"):
        os.killpg(process.popen.pid, signal.SIGKILL)
        process.popen.wait(timeout=10)
    else:
        process.container.kill()
        time.sleep(0.5)


def test_a_sandbox_killed_from_outside_is_not_the_setters_fault(any_backend, monkeypatch):
    from duels.engine import validation

    original = validation.ValidationRun.in_fresh_sandbox
    killed = []

    def kill_the_first(self, work):
        def killed_before_work(sandbox):
            if not killed:
                killed.append(sandbox.backend_name)
                kill_from_outside(sandbox)
            return work(sandbox)

        return original(self, killed_before_work)

    monkeypatch.setattr(validation.ValidationRun, "in_fresh_sandbox", kill_the_first)
    report = report_for(MAZE_ENV, any_backend)
    assert killed, "a sandbox was killed mid-validation"
    assert report["valid"] is True, report


def test_an_environment_that_kills_its_own_sandbox_is_invalid(any_backend):
    source = MAZE_ENV.replace("def reset(self, seed):",
                              "def reset(self, seed):\n        import os; os._exit(3)\n"
                              "    def _unused(self, seed):")
    report = report_for(source, any_backend)
    assert report["valid"] is False
    assert checks(report)["deterministic"] is False
    # A crash of the environment, shown as one: no second sandbox tried as for an outside kill.
    detail = next(check["detail"] for check in report["checks"] if not check["passed"])
    assert "the environment failed" in detail and "ended its own process (status 3)" in detail


def test_validation_needs_two_sandboxes_whatever_it_checks(any_backend, monkeypatch):
    """Validation stands between authoring and the first episode: one sandbox for the first
    pass, one fresh one for determinism and both reference replays."""
    from duels.engine import validation

    original = validation.ValidationRun.in_fresh_sandbox
    opened = []

    def counting(self, work):
        opened.append(1)
        return original(self, work)

    monkeypatch.setattr(validation.ValidationRun, "in_fresh_sandbox", counting)
    report = report_for(MAZE_ENV, any_backend)
    assert report["valid"] is True
    assert "replays succeed for seeds [0, 1]" in next(
        c["detail"] for c in report["checks"] if c["name"] == "reference_solution")
    assert len(opened) == 2


def test_a_reference_replay_that_raises_fails_only_the_reference_check(any_backend):
    source = MAZE_ENV.replace('return [random.Random(seed).choice(["north", "south"])]',
                              'raise RuntimeError("no solution today")')
    report = report_for(source, any_backend)
    assert checks(report)["deterministic"] is True
    assert checks(report)["reference_solution"] is False
    assert "no solution today" in next(
        c["detail"] for c in report["checks"] if c["name"] == "reference_solution")


def detail(report: dict, name: str) -> str:
    return next(c["detail"] for c in report["checks"] if c["name"] == name)


# The module-level random is seeded by the sandbox, and os.urandom is refused when the source
# names it; reached through __import__, the system's entropy is left for the dynamic check alone.
ENTROPY = '(__import__("os").urandom(1)[0] / 256)'
NOISY_REWARD = MAZE_ENV.replace(
    'return {"observation": "A wall.", "done": False, "success": False}',
    'return {"observation": "A wall.", "done": False, "success": False,\n'
    f'                "reward": {ENTROPY} + {ENTROPY} / 256}}')


def test_rewards_that_differ_between_sandboxes_make_the_environment_invalid(any_backend):
    """Acceptance: non-deterministic only in its step rewards; the message names the seed, the
    step and the two differing values."""
    report = report_for(NOISY_REWARD, any_backend)
    assert report["valid"] is False
    assert checks(report) == {**dict.fromkeys(CHECK_NAMES, True), "deterministic": False}
    found = re.fullmatch(r"seed 0, step 1 \(action ''\): reward (\S+) in the first sandbox, "
                         r"(\S+) in the second", detail(report, "deterministic"))
    assert found, detail(report, "deterministic")
    first, second = float(found.group(1)), float(found.group(2))
    assert first != second and 0 <= first < 1 and 0 <= second < 1


def test_observations_from_the_clock_are_caught_at_the_step_that_shows_them(any_backend):
    source = MAZE_ENV.replace('"A wall."', '"A wall at %d." % time.time_ns()').replace(
        "import random", "import random\nimport time")
    report = report_for(source, any_backend)
    assert checks(report)["deterministic"] is False
    text = detail(report, "deterministic")
    # Read in the source first (its line), then seen in the sandboxes. A long text is shown
    # around its first difference, so the start may be cut off ("…' wall at …") when the two
    # clocks agree on many leading digits.
    assert text.startswith("line 16: time.time_ns() reads the clock, so the same seed and "
                           "actions give other answers at another time; count steps instead")
    assert "; seed 0, step 1 (action ''): observation " in text
    assert text.count("wall at") == 2 and "in the first sandbox" in text


def test_the_reference_replay_is_compared_too(any_backend):
    # No action a solver would try reaches the noisy ending: only the reference replay does.
    source = MAZE_ENV.replace('"You escaped!"', f'"You escaped in %.6f s!" % {ENTROPY}').replace(
        "Exits: north, south.", "Find the way out.")
    report = report_for(source, any_backend)
    assert checks(report)["deterministic"] is False
    assert detail(report, "deterministic").startswith("seed 0, step 1 (action ")
    assert "observation 'You escaped in" in detail(report, "deterministic")


def test_a_hint_in_a_step_observation_is_caught(any_backend):
    source = MAZE_ENV.replace('"A wall."', '"A wall. Psst: the goal is the seed parity."')
    report = report_for(source, any_backend, hints=["The goal is   the SEED parity."])
    assert report["valid"] is False
    assert checks(report)["hint_not_leaked"] is False
    assert "appears in the observation of seed 0, step 1 (action '')" in detail(
        report, "hint_not_leaked")


def test_a_syntax_error_names_the_sandbox_python_version(any_backend):
    report = report_for("type Grid = list[list[int]]\n" + MAZE_ENV, any_backend)
    version = sandbox_python_version(backend=any_backend)
    assert checks(report)["module_loads"] is False
    assert "SyntaxError" in detail(report, "module_loads")
    assert f"the sandbox runs Python {version}" in detail(report, "module_loads")


def test_near_miss_method_names_are_warnings(any_backend):
    source = MAZE_ENV.replace("def reference_solution(self, seed):", "def solve(self, seed):")
    report = report_for(source, any_backend)
    assert report["valid"] is True
    assert report["warnings"] == ["Environment defines solve() but no reference_solution(); "
                                  "only reference_solution is called, so solvability is not "
                                  "proven"]
    assert report_for(MAZE_ENV, any_backend)["warnings"] == []


@pytest.mark.django_db  # it also reads whether this design was voided after play here
def test_validate_environment_prints_the_warnings(any_backend, settings, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    settings.ENVDUELS_SANDBOX = any_backend
    path = tmp_path / "near_miss.py"
    path.write_text(MAZE_ENV.replace("def reference_solution(self, seed):",
                                     "def solution(self, seed):"))
    out = StringIO()
    call_command("validate_environment", str(path), stdout=out)
    assert ("  warning: Environment defines solution() but no reference_solution(); only "
            "reference_solution is called, so solvability is not proven") in out.getvalue()


def test_checks_are_listed_in_the_order_they_ran(any_backend):
    """A check an earlier failure stopped comes after the one that failed, never above it."""
    source = MAZE_ENV.replace('        if action == self.goal:',
                              '        if action == "xyzzy":\n'
                              '            raise ValueError("no magic here")\n'
                              '        if action == self.goal:')
    report = report_for(source, any_backend)
    names = [check["name"] for check in report["checks"]]
    assert names == list(CHECK_NAMES)
    assert names[:4] == ["source_size", "module_loads", "three_seeds_reset", "junk_actions"]
    failed = names.index("junk_actions")
    assert report["checks"][failed]["passed"] is False
    assert "no magic here" in report["checks"][failed]["detail"]
    not_run = [n for n, check in enumerate(report["checks"])
               if check["detail"] == "not run: an earlier check failed"]
    assert not_run and min(not_run) > failed
