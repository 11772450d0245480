"""Labels change the data only once people agree: the queue's overlap met with a majority, or a
staff member's adjudication. Until then the design shows "label pending" and nothing moves."""

from __future__ import annotations

import pytest

from duels.selectors.labels import design_label_states, designs_excluded_by_labels
from duels.services.analytics import analytics_refresh
from duels.services.answers import adjudication_save, answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default
from tests.duels.analytics.test_label_exclusion import _tournament

pytestmark = pytest.mark.django_db


def _queue(staff, annotators, overlap):
    return queue_create(user=staff, name="labels", rubric=rubric_default(),
                        selection=QueueSelection(), annotators=annotators, overlap=overlap)


def _answer(user, queue, design, labels):
    answer_save(user=user, queue=queue, index=queue.designs.index(design),
                values={"rating": 2, "labels": labels})


def test_one_answer_of_the_two_the_overlap_asks_for_moves_nothing(make, staff, owner, teammate,
                                                                   client):
    _, duels = _tournament(make)
    design = duels[0].env_a.content_hash
    queue = _queue(staff, [owner, teammate], overlap=2)
    _answer(owner, queue, design, ["broken"])

    assert designs_excluded_by_labels() == {}
    assert design_label_states().pending == {design: ["broken"]}
    assert analytics_refresh(resamples=20).data["labels"]["excluded"] == 0
    client.force_login(staff)
    results = client.get(f"/annotate/queues/{queue.uuid}/results/").content.decode()
    assert "only once this queue's overlap is met (2 answers)" in results
    assert 'data-state="pending"' in results and "label pending" in results
    environment = client.get(f"/environments/{duels[0].env_a.uuid}/").content.decode()
    assert "label pending" in environment

    _answer(teammate, queue, design, ["broken", "trivial"])  # the overlap met, both agree
    assert designs_excluded_by_labels() == {design: ["broken"]}
    assert design_label_states().pending == {}
    assert analytics_refresh(resamples=20).data["labels"]["excluded"] == 1
    results = client.get(f"/annotate/queues/{queue.uuid}/results/").content.decode()
    assert 'data-state="holds"' in results


def test_a_tie_waits_for_adjudication_and_a_majority_of_three_decides(make, staff, owner,
                                                                       teammate,
                                                                       django_user_model):
    outsider = django_user_model.objects.create_user("third", password="pw-third-123")
    _, duels = _tournament(make)
    tied, decided = duels[0].env_a.content_hash, duels[1].env_a.content_hash
    pair = _queue(staff, [owner, teammate], overlap=2)
    _answer(owner, pair, tied, ["hint-leaks-answer"])
    _answer(teammate, pair, tied, [])
    assert design_label_states().pending == {tied: ["hint-leaks-answer"]}
    assert designs_excluded_by_labels() == {}
    adjudication_save(user=staff, queue=pair, design=tied, question_key="labels",
                      value=["hint-leaks-answer"])
    assert designs_excluded_by_labels() == {tied: ["hint-leaks-answer"]}
    adjudication_save(user=staff, queue=pair, design=tied, question_key="labels", value=[])
    assert designs_excluded_by_labels() == {} and design_label_states().pending == {}

    three = _queue(staff, [owner, teammate, outsider], overlap=3)
    _answer(owner, three, decided, ["broken"])
    _answer(teammate, three, decided, ["broken"])
    assert designs_excluded_by_labels() == {}  # 2 of the 3 answers the overlap asks for
    _answer(outsider, three, decided, [])
    assert designs_excluded_by_labels() == {decided: ["broken"]}  # 2 of 3: a majority
