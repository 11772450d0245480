"""Environment writes: validating a stored environment in the sandbox."""

from __future__ import annotations

from django.conf import settings

from duels.models import Environment, EnvironmentStatus


def environment_validate(*, environment: Environment) -> Environment:
    """Validate the environment in the sandbox and store the report, status and `max_steps`.

    The report checks that none of the environment's hints leaks into its reset text.
    """
    # Imported here: the validation module pulls in the sandbox runner.
    from duels.services.validation import environment_validation_report

    hint_texts = list(environment.hints.values_list("text", flat=True))
    report = environment_validation_report(
        source=environment.source, hint_texts=hint_texts, backend=settings.ENVDUELS_SANDBOX
    )
    environment.validation = report
    environment.status = EnvironmentStatus.VALID if report["valid"] else EnvironmentStatus.INVALID
    environment.max_steps = report.get("max_steps")
    environment.save(update_fields=["validation", "status", "max_steps", "content_hash"])
    return environment


def environment_invalid_reason(*, environment: Environment) -> str:
    """Return the failed checks of an invalid environment as one line a person can act on."""
    checks = (environment.validation or {}).get("checks", [])
    failed = [f"{check['name']}: {check.get('detail', '')}".strip(": ")
              for check in checks if not check.get("passed")]
    return "invalid environment — " + ("; ".join(failed) if failed else "validation failed")
