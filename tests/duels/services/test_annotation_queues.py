"""Rubrics (versioned), queues with overlap, answers and adjudication, with who may do what."""

from __future__ import annotations

import pytest

from duels.annotation_defaults import STARTER_LABELS
from duels.models import Answer, Rubric
from duels.selectors.queues import (
    queue_next_index,
    queue_previous_index,
    queue_progress,
)
from duels.services.answers import AnswerError, adjudication_save, answer_save
from duels.services.queues import QueueError, QueueSelection, queue_create, queue_pairs
from duels.services.rubrics import (
    RubricError,
    rubric_clean_questions,
    rubric_create,
    rubric_default,
    rubric_revise,
)

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {"key": "broken", "kind": "yesno", "prompt": "Is it broken?"},
    {"key": "quality", "kind": "scale", "prompt": "Quality", "scale_max": 4},
]


def test_the_starter_tags_are_the_default_rubric():
    rubric = rubric_default()
    labels = rubric.question("labels")
    assert rubric.version == 1
    assert labels["kind"] == "multi" and tuple(labels["labels"]) == STARTER_LABELS
    assert rubric.question("rating")["scale_max"] == 5


def test_an_edit_makes_a_new_version_and_answers_keep_theirs(staff, owner, make):
    first = rubric_create(user=staff, name="Review", questions=QUESTIONS)
    make.environment()
    queue = queue_create(user=staff, name="q", rubric=first, selection=QueueSelection(),
                         annotators=[owner])
    answer = answer_save(user=owner, queue=queue, index=0, values={"broken": "no",
                                                                   "quality": "3"})
    second = rubric_revise(user=staff, rubric=first, name="Review",
                           questions=[*QUESTIONS, {"key": "note", "kind": "text",
                                                   "prompt": "Note"}])
    assert (second.lineage, second.version) == (first.lineage, 2)
    answer.refresh_from_db()
    assert answer.rubric == first and len(first.questions) == 2
    assert answer.values == {"broken": False, "quality": 3}
    assert Rubric.objects.filter(lineage=first.lineage).count() == 2


@pytest.mark.parametrize("questions, message", [
    ([], "at least one question"),
    ([{"key": "Bad key", "kind": "yesno", "prompt": "x"}], "must start with a letter"),
    ([{"key": "a", "kind": "scale", "prompt": "x", "scale_max": 40}], "1 to 2–10"),
    ([{"key": "a", "kind": "single", "prompt": "x", "labels": ["only"]}], "2–30 labels"),
    ([{"key": "a", "kind": "yesno", "prompt": "x"}, {"key": "a", "kind": "text", "prompt": "y"}],
     "share the key"),
    ([{"key": "a", "kind": "ranking", "prompt": "x"}], "kind must be one of"),
])
def test_bad_questions_say_what_to_change(questions, message):
    with pytest.raises(RubricError, match=message):
        rubric_clean_questions(questions)


def test_only_staff_define_rubrics_and_queues(owner, teammate, make):
    with pytest.raises(RubricError, match="Only staff"):
        rubric_create(user=owner, name="Mine", questions=QUESTIONS)
    make.environment()
    with pytest.raises(QueueError, match="Only staff"):
        queue_create(user=owner, name="q", rubric=rubric_default(), selection=QueueSelection(),
                     annotators=[owner, teammate])


def test_overlap_two_gives_each_design_to_two_annotators_then_it_is_done(
        staff, owner, teammate, django_user_model, make):
    third = django_user_model.objects.create_user("third", password="third-pass-123")
    for _ in range(3):
        make.environment()
    rubric = rubric_create(user=staff, name="Review", questions=QUESTIONS)
    queue = queue_create(user=staff, name="q", rubric=rubric, selection=QueueSelection(),
                         annotators=[owner, teammate, third], overlap=2)
    values = {"broken": "no", "quality": "2"}
    for user in (owner, teammate):
        for _ in range(3):
            answer_save(user=user, queue=queue, index=queue_next_index(queue=queue, user=user),
                        values=values)
        assert queue_next_index(queue=queue, user=user) is None
    # Every design has its two answers: nothing is left for the third annotator either.
    assert queue_next_index(queue=queue, user=third) is None
    progress = queue_progress(queue=queue)
    assert (progress.complete, progress.items, progress.answers, progress.needed) == (3, 3, 6, 6)
    assert dict(progress.per_annotator) == {"owner": 3, "teammate": 3, "third": 0}


def test_skip_moves_on_and_back_returns_to_the_last_answer(staff, owner, make):
    for _ in range(3):
        make.environment()
    queue = queue_create(user=staff, name="q", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=[owner])
    assert queue_next_index(queue=queue, user=owner) == 0
    assert queue_next_index(queue=queue, user=owner, after=0) == 1  # skipped the first
    answer_save(user=owner, queue=queue, index=1, values={"rating": 4})
    assert queue_next_index(queue=queue, user=owner, after=1) == 2
    assert queue_next_index(queue=queue, user=owner, after=2) == 0  # wraps to the skipped one
    assert queue_previous_index(queue=queue, user=owner, before=2) == 1


def test_answers_are_checked_against_the_rubric(staff, owner, make):
    make.environment()
    queue = queue_create(user=staff, name="q", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=[owner])
    with pytest.raises(AnswerError, match="choose a number from 1 to 5"):
        answer_save(user=owner, queue=queue, index=0, values={"rating": "9"})
    with pytest.raises(AnswerError, match="needs an answer"):
        answer_save(user=owner, queue=queue, index=0, values={"labels": ["broken"]})
    with pytest.raises(AnswerError, match="not one of its labels"):
        answer_save(user=owner, queue=queue, index=0, values={"rating": 2, "labels": ["nope"]})
    answer = answer_save(user=owner, queue=queue, index=0,
                         values={"rating": "2", "labels": ["trivial", "broken"], "note": " ok "})
    assert answer.values == {"labels": ["trivial", "broken"], "rating": 2, "note": "ok"}
    # Saving again replaces the annotator's own answer: still one answer.
    answer_save(user=owner, queue=queue, index=0, values={"rating": "3"})
    assert Answer.objects.get().values == {"rating": 3}


def test_an_outsider_cannot_answer_and_nobody_edits_anothers_answer(staff, owner, teammate,
                                                                     make):
    make.environment()
    queue = queue_create(user=staff, name="q", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=[owner])
    answer_save(user=owner, queue=queue, index=0, values={"rating": 5})
    with pytest.raises(AnswerError, match="not an annotator of this queue"):
        answer_save(user=teammate, queue=queue, index=0, values={"rating": 1})
    assert Answer.objects.get().values == {"rating": 5}
    with pytest.raises(AnswerError, match="Only staff"):
        adjudication_save(user=owner, queue=queue, design=queue.designs[0],
                          question_key="rating", value=2)


def test_pairwise_queue_has_every_pair_once_and_takes_a_choice(staff, owner, make):
    for _ in range(4):
        make.environment()
    rubric = rubric_default()
    with pytest.raises(QueueError, match="judged on one of its rubric's questions"):
        queue_create(user=staff, name="p", rubric=rubric, selection=QueueSelection(),
                     annotators=[owner], kind="pairwise", pair_question="missing")
    queue = queue_create(user=staff, name="p", rubric=rubric, selection=QueueSelection(),
                         annotators=[owner], kind="pairwise", pair_question="rating")
    assert len(queue.pairs) == 6
    assert {frozenset(pair) for pair in queue.pairs} == {
        frozenset((a, b)) for i, a in enumerate(queue.designs) for b in queue.designs[i + 1:]}
    with pytest.raises(AnswerError, match="Choose the left design"):
        answer_save(user=owner, queue=queue, index=0, choice="left")
    answer = answer_save(user=owner, queue=queue, index=0, choice="b")
    assert (answer.design, answer.design_b, answer.choice) == (*queue.pairs[0], "b")


def test_many_designs_give_a_capped_sample_of_pairs_showing_every_design():
    designs = [f"{n:064x}" for n in range(60)]
    pairs = queue_pairs(designs=designs, seed=3)
    assert len(pairs) == 600
    assert {design for pair in pairs for design in pair} == set(designs)
    assert len({frozenset(pair) for pair in pairs}) == 600


def test_a_queue_from_a_tournament_holds_every_design_its_duels_played(staff, owner, make):
    tournament = make.tournament(name="cup")
    duel = make.finished_duel(tournament=tournament)
    copy = make.finished_duel(tournament=tournament, env_a=duel.env_a)  # a copy: one design
    make.finished_duel()  # another tournament's, or none
    queue = queue_create(user=staff, name="cup designs", rubric=rubric_default(),
                         selection=QueueSelection(source="tournament",
                                                  tournament=tournament.uuid),
                         annotators=[owner])
    assert queue.designs == [duel.env_a.content_hash, duel.env_b.content_hash,
                             copy.env_b.content_hash]
    with pytest.raises(QueueError, match="Choose a tournament that exists"):
        queue_create(user=staff, name="none", rubric=rubric_default(),
                     selection=QueueSelection(source="tournament"), annotators=[owner])


def test_a_queue_from_an_empty_training_set_says_so(staff, owner, make):
    make.environment()  # no training value without an analytics refresh
    with pytest.raises(QueueError, match="The selection holds no designs"):
        queue_create(user=staff, name="set", rubric=rubric_default(),
                     selection=QueueSelection(source="training_set"), annotators=[owner])
