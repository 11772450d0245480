"""The project's corpus of setter answers in the styles real models write, read and validated.

Each file in corpus/setter/ is one answer; corpus/setter/expected.json says what a careful person
makes of it: the title, kind and hint read, or the error the setter is told, and for answers
that are read, what validation in a real sandbox reports. The `seeds_` answers each bring one
source of non-determinism: admitted ones are proven deterministic (twice in one sandbox and in a
fresh one), refused ones name the line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duels.engine.validation import environment_validate
from duels.models import Environment, EnvironmentStatus, Hint
from duels.players import prompts
from tests.sandbox_runner.conftest import first_working_backend

CORPUS = Path(__file__).parent / "corpus" / "setter"
EXPECTED = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
READ = sorted(name for name, expected in EXPECTED.items() if "error" not in expected)
REFUSED = sorted(name for name, expected in EXPECTED.items() if "error" in expected)


def answer_text(name: str) -> str:
    # Bytes, so CRLF answers reach the parser as they were written.
    return (CORPUS / name).read_bytes().decode("utf-8")


def test_the_corpus_is_complete():
    files = {path.name for path in CORPUS.glob("*.md")}
    assert files == set(EXPECTED), "every answer file has an expectation and vice versa"
    assert len(files) >= 20
    # One environment or more per source of non-determinism (docs/environments.md's table).
    assert len([name for name in files if name.startswith("seeds_")]) >= 12
    assert b"\r\n" in (CORPUS / "gemini_crlf.md").read_bytes()


@pytest.mark.parametrize("name", READ)
def test_answers_a_person_accepts_are_read_as_a_person_reads_them(name):
    expected = EXPECTED[name]
    answer = prompts.parse_setter_answer(answer_text(name))
    assert answer.title == (expected["title"] or "Untitled environment")
    assert answer.family == expected["kind"]
    assert answer.hint == expected["hint"]
    assert "class Environment" in answer.source and "\r" not in answer.source
    assert bool(answer.warnings) == ("no title" in expected.get("warnings", []))
    if expected["validation"] == "valid":
        compile(answer.source, name, "exec")  # the whole module, never cut short


@pytest.mark.parametrize("name", REFUSED)
def test_malformed_answers_get_a_repair_request_that_says_what_was_found(name):
    with pytest.raises(prompts.SetterFormatError) as caught:
        prompts.parse_setter_answer(answer_text(name))
    message = str(caught.value)
    assert message[0].isupper()
    for needle in EXPECTED[name]["error"]:
        assert needle in message
    repair = prompts.repair_message(error=message)["content"]
    assert message in repair


@pytest.fixture(scope="module")
def backend() -> str:
    return first_working_backend()


@pytest.mark.django_db
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", READ)
def test_read_answers_through_real_validation(name, backend, settings, make):
    """Stored and validated exactly as authoring does, in real sandboxes."""
    settings.ENVDUELS_SANDBOX = backend
    expected = EXPECTED[name]
    answer = prompts.parse_setter_answer(answer_text(name))
    setter = make.player()
    environment = Environment.objects.create(
        title=answer.title, author=setter, source=answer.source, family=answer.family,
        status=EnvironmentStatus.PENDING, validation=None, max_steps=None)
    Hint.objects.create(environment=environment, author=setter, text=answer.hint)

    environment_validate(environment=environment)

    environment.refresh_from_db()
    report = environment.validation
    failed = {check["name"]: check["detail"] for check in report["checks"] if not check["passed"]}
    warnings = " ".join(report["warnings"])
    for needle in expected.get("warnings", []):
        assert needle in warnings, report["warnings"]
    if not expected.get("warnings"):
        assert report["warnings"] == []
    if expected["validation"] == "valid":
        assert report["valid"] is True, failed
        assert environment.status == EnvironmentStatus.VALID
        deterministic = next(check["detail"] for check in report["checks"]
                             if check["name"] == "deterministic")
        assert "twice in one sandbox and in a fresh one" in deterministic
        return
    assert report["valid"] is False
    assert environment.status == EnvironmentStatus.INVALID
    check = expected["validation"]["check"]
    assert list(failed)[0] == check, failed
    for needle in expected["validation"]["contains"]:
        assert needle in failed[check], failed[check]
