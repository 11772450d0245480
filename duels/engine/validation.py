"""Validate environment source in the sandbox: every check of docs/environments.md, as a report.

`environment_validation_report` is pure (no database); `environment_validate` stores its result
on the Environment.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DataError, IntegrityError, transaction

from duels.bounds import SOURCE_BYTES
from duels.engine.replay_clock import REPLAY_CLOCK_OFFSET
from duels.engine.validation_probes import JUNK_ACTIONS, PROBES
from duels.engine.validation_static import determinism_findings
from duels.engine.validation_transcript import (
    REFERENCE_SEEDS,
    VALIDATION_SEEDS,
    Transcript,
    determinism_problem,
    hint_leaks,
    near_miss_warnings,
    play_script,
    same_sandbox_problem,
)
from duels.models import Environment, EnvironmentStatus
from duels.models.environments import report_invalid_reason
from duels.players.answers import UNTITLED
from sandbox_runner import (
    EnvCodeError,
    SandboxCrashed,
    SandboxError,
    SandboxLimits,
    SandboxUnavailable,
    open_sandbox,
)
from sandbox_runner.replies import MAX_STEPS, MIN_STEPS
from sandbox_runner.versions import sandbox_python_version

logger = logging.getLogger(__name__)

MAX_SOURCE_BYTES = SOURCE_BYTES
MAX_FINDINGS_SHOWN = 5
UNTITLED_WARNING = (f"the setter's answer gave no title (no TITLE: line); it is shown as "
                    f"'{UNTITLED}'")
# In the order they run (the report lists them so, and a check an earlier failure stopped says
# so after it): the first sandbox resets three seeds, plays junk, probes and announced actions,
# replays the reference and plays the solver's game again; then the two sandboxes' answers are
# compared (deterministic) and searched for the hint.
CHECK_NAMES = ("source_size", "module_loads", "three_seeds_reset", "junk_actions",
               "reference_solution", "deterministic", "hint_not_leaked", "within_limits")


class ValidationRun:
    """Collects check results while sandboxes run; any sandbox-limit error is recorded."""

    def __init__(self, source: str, limits: SandboxLimits | None, backend: str,
                 adapter: dict | None = None) -> None:
        self.source = source
        self.adapter = adapter
        self.limits = limits
        self.backend = backend
        self.backend_used = backend
        self.checks: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        self.limit_errors: list[str] = []
        self.max_steps: int | None = None
        self.clock_offset = 0  # the fresh sandbox's clocks are moved (duels.engine.replay_clock)

    def record(self, name: str, passed: bool, detail: str) -> bool:
        self.checks[name] = {"name": name, "passed": passed, "detail": detail}
        return passed

    def in_fresh_sandbox(self, work: Callable[[Any], Any]) -> Any:
        """Run `work(sandbox)` in a newly loaded sandbox; sandbox errors propagate."""
        with open_sandbox(self.source, limits=self.limits, backend=self.backend,
                          clock_offset=self.clock_offset, adapter=self.adapter) as sandbox:
            self.backend_used = sandbox.backend_name
            self.max_steps = sandbox.max_steps
            return work(sandbox)

    def attempt(self, name: str | Callable[[], str], work: Callable[[Any], Any]) -> Any:
        """Run one check's sandbox work; on failure record the check as failed and return None.

        `name` may be a callable, for work that moves through several checks. A sandbox that
        dies without the environment's code raising may have been killed from outside (an
        infrastructure fault, not the setter's): the check runs once more in a fresh sandbox,
        and only a second crash, which the environment's deterministic code causes again, fails it.
        """
        try:
            try:
                return self.in_fresh_sandbox(work)
            except SandboxCrashed:
                return self.in_fresh_sandbox(work)
        except SandboxUnavailable:
            raise
        except EnvCodeError as error:
            name = name() if callable(name) else name
            self.record(name, False, f"the environment failed: {short(error)}"
                        + self.version_note(error))
        except SandboxError as error:
            name = name() if callable(name) else name
            self.limit_errors.append(f"{name}: {type(error).__name__}: {short(error)}")
            self.record(name, False, f"{type(error).__name__}: {short(error)}")
        return None

    def version_note(self, error: EnvCodeError) -> str:
        """What a SyntaxError or a missing module means here: the sandbox's exact Python."""
        kind = getattr(error, "error_type", "")
        if kind not in ("SyntaxError", "ModuleNotFoundError", "ImportError"):
            return ""
        version = sandbox_python_version(backend=self.backend_used)
        if kind == "SyntaxError":
            return (f" (the sandbox runs Python {version}: syntax of newer versions, such as "
                    "`type X = ...` aliases or `[T]` type parameters, does not parse there)")
        return f" (the sandbox runs Python {version}, standard library only)"

    def report(self) -> dict[str, Any]:
        for name in CHECK_NAMES:
            self.checks.setdefault(name, {"name": name, "passed": False,
                                          "detail": "not run: an earlier check failed"})
        checks = [self.checks[name] for name in CHECK_NAMES]
        return {"valid": all(check["passed"] for check in checks), "backend": self.backend_used,
                "checks": checks, "max_steps": self.max_steps, "warnings": self.warnings}


def short(error: BaseException, limit: int = 500) -> str:
    text = str(error).strip()
    return text if len(text) <= limit else text[:limit] + "…"


def environment_validation_report(*, source: str, hint_texts: list[str],
                                  limits: SandboxLimits | None = None,
                                  backend: str = "auto",
                                  adapter: dict | None = None) -> dict[str, Any]:
    """Run every validation check (docs/environments.md) on `source` in two fresh sandboxes.

    The source is read first (validation_static: sources of non-determinism the sandbox cannot
    pin are refused with their line); then both sandboxes play the same script
    (validation_transcript.play_script), the first also playing the solver's game a second time,
    and their transcripts are compared answer by answer. Raises SandboxUnavailable when no
    sandbox can run here (that is not the setter's fault). With `adapter` (an imported
    envduels-v1 class) the same checks play the class through the guest's adapter.
    """
    run = ValidationRun(source, limits, backend, adapter)
    if adapter is None:  # near misses are of EnvDuels' own names
        run.warnings.extend(near_miss_warnings(source))
    static_refusals, static_warnings = determinism_findings(source)
    if len(static_refusals) > MAX_FINDINGS_SHOWN:  # the report stays short: the first few lines
        static_refusals = [*static_refusals[:MAX_FINDINGS_SHOWN],
                           f"and {len(static_refusals) - MAX_FINDINGS_SHOWN} more such line(s)"]
    run.warnings.extend(static_warnings[:MAX_FINDINGS_SHOWN])
    size = len(source.encode("utf-8", "surrogatepass"))
    if not run.record("source_size", size <= MAX_SOURCE_BYTES,
                      f"{size} bytes (limit {MAX_SOURCE_BYTES})"):
        run.record("within_limits", True, "no sandbox was started")
        return run.report()

    transcripts: list[Transcript] = []
    for repeat in (True, False):
        stage = {"check": "module_loads"}
        transcript = Transcript()

        # The fresh sandbox runs with its clocks moved, so a time read anywhere shows.
        run.clock_offset = 0 if repeat else REPLAY_CLOCK_OFFSET

        def play(sandbox, transcript=transcript, stage=stage, repeat=repeat) -> dict[str, Any]:
            transcript.clear()  # a retried attempt starts its transcript again
            return play_script(sandbox, transcript, stage, repeat=repeat)

        played = run.attempt(lambda stage=stage: stage["check"], play)
        if stage["check"] != "module_loads":
            run.record("module_loads", True, f"Environment loaded; max_steps = {run.max_steps}")
        if not transcripts:
            # What the checks before a failure found is reported too (a failed one keeps its
            # failure): only the checks after it read "not run".
            record_first_pass(run, stage if played is None else played)
        if played is None:
            break
        transcripts.append(transcript)
    if transcripts:
        leaks = hint_leaks(transcripts, hint_texts)
        run.record("hint_not_leaked", not leaks, "; ".join(leaks) or (
            f"{len(hint_texts)} hint(s) absent from every reset text and observation"))
    if len(transcripts) == 2:
        problem = (determinism_problem(transcripts[0].fresh_part(), transcripts[1].entries)
                   or same_sandbox_problem(transcripts[0]))
        run.record("deterministic", not (problem or static_refusals), "; ".join(
            [*static_refusals, *([problem] if problem else [])]) or (
            "the same seeds and actions gave the same observations, rewards, done and success "
            f"twice in one sandbox and in a fresh one ({len(transcripts[0].entries)} answers "
            "compared)"))
    elif static_refusals:
        run.record("deterministic", False, "; ".join(static_refusals))
    finish_limits_check(run)
    return run.report()


NO_REFERENCE = "no reference_solution (optional)"


def record_first_pass(run: ValidationRun, played: dict[str, Any]) -> None:
    """Record the checks the first sandbox decides on its own (those it got to, when it
    stopped early; a check already recorded as failed stays so)."""
    def record(name: str, passed: bool, detail: str) -> None:
        if name not in run.checks:
            run.record(name, passed, detail)

    if "resets" not in played:
        return
    record("three_seeds_reset", all(text.strip() for text in played["resets"].values()),
           f"seeds {list(VALIDATION_SEEDS)} reset to non-empty text")
    if "actions" not in played:
        return
    announced = len(played["actions"]) - len(JUNK_ACTIONS) - len(PROBES)
    record("junk_actions", True, (
        f"{len(JUNK_ACTIONS)} junk actions, the probes {', '.join(PROBES)} and {announced} "
        "action(s) announced in the reset texts gave well-formed results"))
    if "has_reference" not in played:
        return
    if not played["has_reference"]:
        record("reference_solution", True, NO_REFERENCE)
        return
    failures = [text for text in played["replays"] if text]
    record("reference_solution", not failures,
           "; ".join(failures) or f"replays succeed for seeds {list(REFERENCE_SEEDS)}")


def report_check_passed(report: dict[str, Any] | None, name: str) -> bool:
    """Whether a stored validation report says check `name` passed (False when absent)."""
    checks = (report or {}).get("checks") or []
    return any(isinstance(check, dict) and check.get("name") == name and check.get("passed") is True
               for check in checks)


def report_reference_solved(report: dict[str, Any] | None) -> bool:
    """Whether the report's reference solution existed and replayed to success."""
    checks = (report or {}).get("checks") or []
    return report_check_passed(report, "reference_solution") and not any(
        isinstance(check, dict) and check.get("name") == "reference_solution"
        and check.get("detail") == NO_REFERENCE for check in checks)


def finish_limits_check(run: ValidationRun) -> None:
    run.record("within_limits", not run.limit_errors,
               "; ".join(run.limit_errors) or "every call stayed within the sandbox limits")


def source_validate(*, source: str, hint_texts: list[str], name: str,
                    adapter: dict | None = None) -> dict[str, Any]:
    """The validation report of `source` in this installation's sandbox, as a duel takes it:
    an unexpected failure or a `max_steps` out of range is an invalid report with the reason.
    `adapter` plays an imported envduels-v1 class (a stored environment's `sandbox_adapter`).
    Only SandboxUnavailable (no sandbox here: an infrastructure fault) escapes."""
    try:
        report = environment_validation_report(
            source=source, hint_texts=hint_texts, backend=settings.ENVDUELS_SANDBOX,
            adapter=adapter)
    except SandboxUnavailable:
        raise
    except Exception as error:
        logger.exception("validating %s stopped on an unexpected error", name)
        report = validation_error_report(
            f"validation stopped on an unexpected error: {type(error).__name__}: {short(error)}")
    max_steps = report.get("max_steps")
    if max_steps is not None and (type(max_steps) is not int
                                  or not MIN_STEPS <= max_steps <= MAX_STEPS):
        report = validation_error_report(
            f"max_steps {str(max_steps)[:40]} is outside {MIN_STEPS}..{MAX_STEPS}")
    return report


def environment_validate(*, environment: Environment) -> Environment:
    """Validate the environment in the sandbox and store the report, status and `max_steps`.

    The report checks that none of the environment's hints appears in any text it returned, and
    warns when its setter gave no title. Only
    SandboxUnavailable (no sandbox here: an infrastructure fault) escapes; any other failure,
    even an unexpected one, makes the environment invalid with the reason, so its side forfeits
    and the duel goes on.
    """
    hint_texts = list(environment.hints.values_list("text", flat=True))
    report = source_validate(source=environment.source, hint_texts=hint_texts,
                             name=f"environment {environment.uuid}",
                             adapter=environment.sandbox_adapter)
    if environment.title == UNTITLED and environment.author_id is not None:
        report["warnings"] = [UNTITLED_WARNING, *report.get("warnings", [])]
    try:
        with transaction.atomic():
            validation_store(environment=environment, report=report)
    except (DataError, IntegrityError) as error:
        logger.exception("could not store the validation of environment %s", environment.uuid)
        validation_store(environment=environment, report=validation_error_report(
            f"the validation result could not be stored: {short(error)}"))
    return environment


def validation_error_report(reason: str) -> dict[str, Any]:
    """An invalid report for a validation that could not run to its end: `reason` says why."""
    checks = [{"name": name, "passed": False, "detail": f"not run: {reason}"}
              for name in CHECK_NAMES]
    return {"valid": False, "backend": None, "checks": checks, "max_steps": None,
            "warnings": [], "error": reason}


def validation_store(*, environment: Environment, report: dict[str, Any]) -> None:
    environment.validation = report
    environment.status = EnvironmentStatus.VALID if report["valid"] else EnvironmentStatus.INVALID
    environment.max_steps = report.get("max_steps")
    environment.save(update_fields=["validation", "status", "max_steps", "content_hash"])


def environment_invalid_reason(*, environment: Environment) -> str:
    """Return the failed checks of an invalid environment as one line a person can act on."""
    return report_invalid_reason(environment.validation)
