"""Rubrics (with their versions), queues, answers and adjudications leave and arrive with the
rest of an installation (envduels.v1), merge by uuid, and a re-import adds nothing."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from duels.exchange.importer import ExchangeImportError
from duels.models import Adjudication, AnnotationQueue, Answer, Rubric
from duels.services.answers import adjudication_save, answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_create, rubric_default, rubric_revise
from tests.duels.exchange.test_exchange import (
    dump_database,
    export_text,
    import_text,
    wipe_database,
)

pytestmark = pytest.mark.django_db

QUESTIONS = [{"key": "leaks", "kind": "yesno", "prompt": "Does the hint leak?"},
             {"key": "kind", "kind": "single", "prompt": "Kind", "labels": ["maze", "cipher"]}]


@pytest.fixture
def annotated(make, staff, owner, teammate):
    for _ in range(3):
        make.hint(environment=make.environment())
    first = rubric_create(user=staff, name="Hint check", questions=QUESTIONS)
    second = rubric_revise(user=staff, rubric=first, name="Hint check",
                           questions=[*QUESTIONS, {"key": "why", "kind": "text",
                                                   "prompt": "Why?"}])
    old = queue_create(user=staff, name="old", rubric=first, selection=QueueSelection(),
                       annotators=[owner, teammate], overlap=2)
    new = queue_create(user=staff, name="new", rubric=second, selection=QueueSelection(),
                       annotators=[owner])
    pairwise = queue_create(user=staff, name="pairs", rubric=rubric_default(),
                            selection=QueueSelection(), annotators=[owner, teammate],
                            kind="pairwise", pair_question="rating")
    answer_save(user=owner, queue=old, index=0, values={"leaks": "yes", "kind": "maze"})
    answer_save(user=teammate, queue=old, index=0, values={"leaks": "no", "kind": "maze"})
    answer_save(user=owner, queue=new, index=1, values={"leaks": "no", "kind": "cipher",
                                                        "why": "fine"})
    answer_save(user=owner, queue=pairwise, index=0, choice="a")
    answer_save(user=teammate, queue=pairwise, index=0, choice="tie")
    adjudication_save(user=staff, queue=old, design=old.designs[0], question_key="leaks",
                      value="yes", note="the hint names the door")
    return first, second


def _wipe_team() -> None:
    Adjudication.objects.all().delete()
    Answer.objects.all().delete()
    AnnotationQueue.objects.all().delete()
    Rubric.objects.all().delete()
    wipe_database()


def test_round_trip_into_a_fresh_installation_keeps_versions_queues_and_answers(annotated):
    first, second = annotated
    text = export_text()
    kinds = [json.loads(line)["kind"] for line in text.splitlines()[1:]]
    assert (kinds.count("rubric"), kinds.count("queue"), kinds.count("answer"),
            kinds.count("adjudication")) == (3, 3, 5, 1)
    answer_line = next(json.loads(line) for line in text.splitlines()
                       if '"kind": "answer"' in line and '"why"' in line)
    assert answer_line["rubric_version"] == 2 and len(answer_line["design"]) == 64
    _wipe_team()
    report = import_text(text)
    assert report.created["rubric"] == 3 and report.created["answer"] == 5
    assert sorted(export_text().splitlines()) == sorted(text.splitlines())
    versions = Rubric.objects.filter(lineage=first.lineage).order_by("version")
    assert [(r.uuid, r.version) for r in versions] == [(first.uuid, 1), (second.uuid, 2)]
    old = AnnotationQueue.objects.get(name="old")
    assert sorted(u.username for u in old.annotators.all()) == ["imported:owner",
                                                                 "imported:teammate"]
    assert Answer.objects.get(queue__name="new").rubric.version == 2
    # The names arrive as imported identities, never as accounts that could sign in.
    assert not get_user_model().objects.filter(username="owner").exists()


def test_reimport_adds_nothing(annotated):
    text = export_text()
    before = dump_database()
    report = import_text(text)
    assert report.created_total == 0
    assert dump_database() == before


def test_an_answer_naming_another_rubric_version_is_refused_by_line(annotated):
    text = export_text()
    _wipe_team()
    lines = text.splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, start=1) if '"rubric_version": 2' in line)
    lines[number - 1] = lines[number - 1].replace('"rubric_version": 2', '"rubric_version": 1')
    with pytest.raises(ExchangeImportError, match=f"line {number}: .*rubric_version"):
        import_text("".join(lines))
    assert not Rubric.objects.filter(name="Hint check").exists()


@pytest.mark.parametrize("kind, change, message", [
    ("rubric", {"questions": []}, "at least one question"),
    ("queue", {"designs": ["not-a-hash"]}, "content hash"),
    ("answer", {"annotator": ""}, "names a user"),
    ("adjudication", {"design": "x" * 64}, "content hash"),
])
def test_bad_team_records_name_the_line(annotated, kind, change, message):
    lines = export_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, start=1) if f'"kind": "{kind}"' in line)
    record = json.loads(lines[number - 1]) | change
    lines[number - 1] = json.dumps(record) + "\n"
    with pytest.raises(ExchangeImportError, match=f"line {number}: .*{message}"):
        import_text("".join(lines))


def test_the_builtin_rubric_is_the_same_record_on_every_installation(annotated):
    """A fresh installation makes its own default rubric (the migration) at its own moment:
    export → import there → export still gives identical records, the rubric included."""
    from datetime import timedelta

    from django.utils import timezone

    from duels.annotation_defaults import DEFAULT_RUBRIC_UUID
    from duels.exchange.builtins import BUILTIN_CREATED_AT

    text = export_text()
    default = next(json.loads(line) for line in text.splitlines()
                   if DEFAULT_RUBRIC_UUID in line and '"kind": "rubric"' in line)
    assert default["created_at"] == BUILTIN_CREATED_AT
    _wipe_team()
    fresh = rubric_default()  # the fresh installation's own, stamped now
    Rubric.objects.filter(pk=fresh.pk).update(created_at=timezone.now() + timedelta(days=3))
    import_text(text)
    assert sorted(export_text().splitlines()) == sorted(text.splitlines())
