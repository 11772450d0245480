"""Export/import of the envduels.v1 format: round trip, merge, re-import, corrupt files."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from duels.exchange.export import exchange_export
from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.selectors import exchange_everything
from duels.models import (
    Annotation,
    Duel,
    Environment,
    Episode,
    Hint,
    Player,
    Step,
    TargetKind,
    Tournament,
    TransferResult,
)

pytestmark = pytest.mark.django_db


def export_text(querysets=None) -> str:
    out = io.StringIO()
    exchange_export(querysets=querysets or exchange_everything(), out=out)
    return out.getvalue()


def import_text(text: str):
    return exchange_import(stream=io.BytesIO(text.encode("utf-8")))


def dump_database() -> str:
    out = io.StringIO()
    call_command("dumpdata", "duels", "auth.user", stdout=out)
    return out.getvalue()


def wipe_database() -> None:
    for model in (Annotation, TransferResult, Step, Episode, Duel, Tournament, Hint, Environment,
                  Player):
        model.objects.all().delete()
    get_user_model().objects.all().delete()


@pytest.fixture
def populated(make, owner, teammate):
    """A finished two-round tournament, notes on all three target kinds, transfer results."""
    a, b, c = make.player(), make.player(name="gpt-ish", provider="openai", model="gpt-x",
                                         api_key_env="OPENAI_API_KEY"), make.player()
    tour = make.tournament(players=[a, b, c], status="finished")
    duels = [
        make.finished_duel(a=a, b=b, tournament=tour),
        make.finished_duel(a=b, b=c, tournament=tour, hinted_a=(False, False)),
        make.finished_duel(a=c, b=a, tournament=tour, unhinted_b=(False, False)),
    ]
    episode = duels[0].episodes.first()
    Annotation.objects.create(target_kind=TargetKind.ENVIRONMENT, environment=duels[0].env_a,
                              author=owner, tags=["elegant", "needs-hint"], rating=4,
                              text="Nice <b>design</b>", line_start=2, line_end=4)
    Annotation.objects.create(target_kind=TargetKind.EPISODE, episode=episode, author=teammate,
                              text="Solver guessed.")
    Annotation.objects.create(target_kind=TargetKind.STEP, episode=episode, step_index=1,
                              author=owner, tags=["broken"])
    TransferResult.objects.create(learner=a, environment=duels[0].env_a, benchmark="gsm8k",
                                  before=0.5, after=0.625)
    TransferResult.objects.create(learner=b, author=c, benchmark="arc", before=0.1, after=0.2)
    return duels


REFERENCE_KEYS = ("author", "environment", "episode", "duel", "solver", "a", "b", "env_a", "env_b",
                  "hint", "hint_a", "hint_b", "learner", "tournament")


def test_export_starts_with_format_line_and_orders_references_first(populated):
    lines = export_text().splitlines()
    assert json.loads(lines[0]) == {"format": "envduels.v1"}
    seen: set[str] = set()
    for line in lines[1:]:
        record = json.loads(line)
        refs = [record.get(key) for key in REFERENCE_KEYS if key in record]
        if record["kind"] == "annotation":
            refs = [record["target"]]  # its author is a username, not a record
        refs += record.get("players", [])
        for value in refs:
            assert value is None or value in seen, f"{record['kind']} refers ahead to {value}"
        seen.add(record["uuid"])
    kinds = [json.loads(line)["kind"] for line in lines[1:]]
    assert kinds.count("step") == Step.objects.count()
    assert kinds.count("annotation") == 3


def test_export_never_contains_keys_only_variable_names(populated, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123")
    text = export_text()
    assert "sk-secret-value-123" not in text
    players = [json.loads(line) for line in text.splitlines() if '"kind": "player"' in line]
    assert {"api_key_env": "OPENAI_API_KEY"}.items() <= next(
        p for p in players if p["name"] == "gpt-ish"
    ).items()


def test_round_trip_into_empty_database_gives_identical_export(populated):
    first = export_text()
    wipe_database()
    assert Player.objects.count() == 0
    report = import_text(first)
    assert report.created["step"] == Step.objects.count() > 0
    second = export_text()
    assert sorted(_as_imported(first.splitlines())) == sorted(second.splitlines())
    assert Player.objects.get(name="gpt-ish").imported  # no key variable until staff set one
    # Scores are derived again from the episodes, not copied.
    duel = Duel.objects.get(uuid=populated[0].uuid)
    assert (duel.setter_score_a, duel.setter_score_b, duel.outcome) == (1.0, 0.25, "a")
    assert Tournament.objects.get().duels_total == 3


def test_reimport_is_a_no_op(populated):
    text = export_text()
    before = dump_database()
    report = import_text(text)
    assert report.created_total == 0
    assert sum(report.skipped.values()) == len(text.splitlines()) - 1
    assert dump_database() == before


def test_merge_by_uuid_with_another_installation(populated, make):
    theirs = export_text()
    wipe_database()
    mine = make.finished_duel()
    import_text(theirs)
    assert Duel.objects.count() == 4
    assert Duel.objects.filter(uuid=mine.uuid).exists()


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _as_imported(lines: list[str]) -> list[str]:
    """The lines as an import stores them: players without their key variable."""
    return [
        line.replace('"api_key_env": "OPENAI_API_KEY"', '"api_key_env": ""') for line in lines
    ]


def _edit(text: str, kind: str, change) -> tuple[str, int]:
    """Apply `change` to the first record of `kind`; return the new text and its line number."""
    lines = _lines(text)
    for number, line in enumerate(lines, start=1):
        record = json.loads(line)
        if record.get("kind") == kind:
            lines[number - 1] = change(record, lines) + "\n"
            return "".join(lines), number
    raise AssertionError(kind)


def _set(**fields):
    def change(record, _lines):
        record.update(fields)
        return json.dumps(record)
    return change


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("truncated", "truncated"),
        ("broken_json", "not valid JSON"),
        ("wrong_type", "must be a whole number"),
        ("dangling", "neither in this file nor in the database"),
        ("duplicate", "different content"),
        ("version", "unsupported format"),
        ("unknown_kind", "unknown kind"),
        ("outcome", "states outcome"),
        ("bad_uuid", "not a valid uuid"),
        ("missing_field", "lacks field"),
        ("changed_in_db", "already exists here with different content"),
    ],
)
def test_corrupt_file_names_the_line_and_changes_nothing(populated, case, expected):
    text = export_text()
    if case == "changed_in_db":
        pass  # the database already holds these objects; one of them is edited in the file
    else:
        wipe_database()
        Player.objects.create(name="bystander", provider="builtin", model="m", builtin=True)
    line = None
    if case == "truncated":
        text = text[: len(text) - 25]
        line = len(_lines(text))
    elif case == "broken_json":
        text, line = _edit(text, "episode", lambda record, _l: json.dumps(record)[:-3])
    elif case == "wrong_type":
        text, line = _edit(text, "episode", _set(seed="zero"))
    elif case == "dangling":
        text, line = _edit(text, "hint", _set(environment="6f1c3c4e-8d47-4c63-9d5a-0d6d7f6b2a10"))
    elif case == "duplicate":
        lines = _lines(text)
        record = json.loads(lines[3])
        record[next(k for k in ("name", "title", "text") if k in record)] = "changed"
        lines.append(json.dumps(record) + "\n")
        text, line = "".join(lines), len(lines)
    elif case == "version":
        text = '{"format": "envduels.v2"}\n' + "".join(_lines(text)[1:])
        line = 1
    elif case == "unknown_kind":
        text, line = _edit(text, "transfer", _set(kind="transfer_v2"))
    elif case == "outcome":
        text, line = _edit(text, "duel", _set(outcome="b"))
    elif case == "bad_uuid":
        text, line = _edit(text, "step", _set(uuid="not-a-uuid"))
    elif case == "missing_field":
        def drop(record, _lines):
            del record["source"]
            return json.dumps(record)
        text, line = _edit(text, "environment", drop)
    elif case == "changed_in_db":
        text, line = _edit(text, "player", _set(model="another-model"))
    before = dump_database()
    with pytest.raises(ExchangeImportError) as caught:
        import_text(text)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"line {line}: ")
    assert expected in str(caught.value)
    assert dump_database() == before


def test_episodes_may_come_without_steps(populated):
    text = "".join(line for line in _lines(export_text()) if '"kind": "step"' not in line)
    wipe_database()
    report = import_text(text)
    assert report.created["step"] == 0
    assert report.created["episode"] == Episode.objects.count() == 24


def test_hostile_transcript_strings_are_stored_as_text(populated):
    hostile = '<script>alert("x")</script>'
    text, _ = _edit(export_text(), "step", _set(reply=hostile, observation=hostile))
    wipe_database()
    import_text(text)
    assert Step.objects.filter(reply=hostile, observation=hostile).count() == 1


def test_references_may_follow_referrers(populated):
    lines = _lines(export_text())
    shuffled = lines[:1] + list(reversed(lines[1:]))
    wipe_database()
    import_text("".join(shuffled))
    assert sorted(_lines(export_text())) == sorted(_as_imported(lines))
