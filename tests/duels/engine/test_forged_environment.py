"""An environment that forges the guest's replies, or whose validation fails in an unexpected
way, is invalid: its side forfeits with the reason and the duel goes on (never stuck running)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError

from duels.engine import authoring, validation
from duels.engine.duels import duel_create
from duels.engine.scheduler import duel_run
from duels.engine.validation import environment_invalid_reason, environment_validate
from duels.models import EnvironmentStatus, Status
from duels.players.base import Completion
from tests.sandbox_runner import hostile

pytestmark = pytest.mark.timeout(300)


@pytest.mark.django_db
@pytest.mark.parametrize("max_steps", [10**9, -5])
def test_a_forged_max_steps_makes_the_environment_invalid(make, sandbox_backend, max_steps):
    environment = make.environment(source=hostile.forged_load(max_steps=max_steps),
                                   status=EnvironmentStatus.PENDING, max_steps=None)

    environment_validate(environment=environment)  # before the fix: IntegrityError for -5

    environment.refresh_from_db()
    assert environment.status == EnvironmentStatus.INVALID
    assert environment.max_steps is None
    loads = {check["name"]: check for check in environment.validation["checks"]}["module_loads"]
    assert loads["passed"] is False and "max_steps" in loads["detail"]
    assert "max_steps" in environment_invalid_reason(environment=environment)


@pytest.mark.django_db
def test_an_unexpected_error_in_validation_makes_the_environment_invalid(
        make, sandbox_backend, monkeypatch):
    def broken_report(**kwargs):
        raise KeyError("a bug nobody foresaw")

    monkeypatch.setattr(validation, "environment_validation_report", broken_report)
    environment = make.environment(status=EnvironmentStatus.PENDING, max_steps=None)

    environment_validate(environment=environment)

    environment.refresh_from_db()
    assert environment.status == EnvironmentStatus.INVALID
    reason = environment_invalid_reason(environment=environment)
    assert "unexpected error: KeyError" in reason and "a bug nobody foresaw" in reason


FORGING_SETTER_REPLY = (
    "TITLE: Forged\n```python\n" + hostile.forged_load(max_steps=-5)
    + "```\n```hint\nthere is nothing to find\n```\n"
)


@pytest.mark.django_db(transaction=True)
def test_a_duel_with_a_forging_setter_finishes_and_that_side_forfeits(
        make, sandbox_backend, monkeypatch):
    forger, honest = make.player(), make.player()
    real_client = authoring.player_client

    class ForgingSetter:
        def complete(self, messages, **options):
            return Completion(text=FORGING_SETTER_REPLY, input_tokens=10, output_tokens=10)

    monkeypatch.setattr(authoring, "player_client", lambda player: ForgingSetter()
                        if player.pk == forger.pk else real_client(player))

    duel = duel_run(duel=duel_create(a=forger, b=honest, attempts=1))

    assert duel.status == Status.FINISHED, duel.error
    assert "max_steps" in duel.forfeit_a
    assert duel.env_a.status == EnvironmentStatus.INVALID
    assert duel.forfeit_b == "" and duel.outcome in {"b", "draw"}
    assert duel.setter_score_a == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("error", [KeyError("a bug nobody foresaw"),
                                   IntegrityError("CHECK constraint failed: max_steps")])
def test_an_unexpected_error_while_authoring_forfeits_that_side_and_the_duel_goes_on(
        make, sandbox_backend, monkeypatch, error):
    a, b = make.player(), make.player()
    real_validate = authoring.environment_validate

    def validate(*, environment):
        if environment.author_id == a.pk:
            raise error
        return real_validate(environment=environment)

    monkeypatch.setattr(authoring, "environment_validate", validate)

    duel = duel_run(duel=duel_create(a=a, b=b, attempts=1))

    assert duel.status == Status.FINISHED, duel.error
    assert type(error).__name__ in duel.forfeit_a and "stored or validated" in duel.forfeit_a
    assert duel.forfeit_b == "" and duel.setter_score_a == 0
