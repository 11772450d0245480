"""Labels change what is counted: leaving out designs labelled broken gives exactly the figures
of an installation where they were never stored."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from duels.analytics.compute import analytics_compute
from duels.models import Duel, Environment, Episode, Hint
from duels.selectors.analytics import analytics_input
from duels.selectors.labels import designs_excluded_by_labels
from duels.services.analytics import analytics_refresh
from duels.services.answers import adjudication_save, answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default

pytestmark = pytest.mark.django_db
MOMENT = datetime(2026, 1, 7, 12, tzinfo=UTC)


def _tournament(make):
    players = [make.player(name=f"p{i}") for i in range(4)]
    duels = []
    for i, a in enumerate(players):
        for j, b in enumerate(players[i + 1:], start=i + 1):
            duels.append(make.finished_duel(
                a=a, b=b, unhinted_a=(i % 2 == 0, False), hinted_a=(True, j % 2 == 0),
                unhinted_b=(True, j % 3 == 0), hinted_b=(True, True)))
    return players, duels


def _label(staff, annotators, environments, labels_by_design):
    queue = queue_create(user=staff, name="labels", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=annotators, overlap=2)
    position = {design: i for i, design in enumerate(queue.designs)}
    for environment in environments:
        for annotator, labels in zip(annotators, labels_by_design[environment.pk], strict=True):
            answer_save(user=annotator, queue=queue, index=position[environment.content_hash],
                        values={"rating": 3, "labels": labels})
    return queue


def test_excluding_labelled_designs_equals_recomputing_without_them(make, staff, owner,
                                                                    teammate):
    _, duels = _tournament(make)
    broken = duels[0].env_a
    leaking = duels[4].env_b
    fine = duels[2].env_a
    queue = _label(staff, [owner, teammate], [broken, leaking, fine], {
        broken.pk: (["broken"], ["broken", "trivial"]),
        leaking.pk: (["hint-leaks-answer"], ["elegant"]),  # split: not a majority
        fine.pk: (["broken"], []),
    })
    excluded = designs_excluded_by_labels()
    assert excluded == {broken.content_hash: ["broken"]}
    # A staff member settles the split: the hint leaks.
    adjudication_save(user=staff, queue=queue, design=leaking.content_hash,
                      question_key="labels", value=["hint-leaks-answer"])
    excluded = designs_excluded_by_labels()
    assert set(excluded) == {broken.content_hash, leaking.content_hash}

    counted = analytics_compute(analytics_input(), computed_at=MOMENT, resamples=100)
    leaving_out = analytics_compute(analytics_input(excluding=list(excluded)),
                                    computed_at=MOMENT, resamples=100)
    # Now the installation as if those designs had never been stored.
    gone = Environment.objects.filter(content_hash__in=excluded)
    gone_duels = Duel.objects.filter(env_a__in=gone) | Duel.objects.filter(env_b__in=gone)
    Episode.objects.filter(duel__in=gone_duels).delete()
    Episode.objects.filter(environment__in=gone).delete()
    gone_duels.delete()
    Hint.objects.filter(environment__in=gone).delete()
    gone.delete()
    recomputed = analytics_compute(analytics_input(), computed_at=MOMENT, resamples=100)
    assert leaving_out == recomputed
    assert leaving_out["summary"]["duels"] == counted["summary"]["duels"] - 2
    assert leaving_out["ratings"] != counted["ratings"]


def test_the_snapshot_states_how_many_were_excluded_and_how_figures_moved(make, staff, owner,
                                                                         teammate):
    _, duels = _tournament(make)
    broken = duels[1].env_b
    _label(staff, [owner, teammate], [broken], {broken.pk: (["broken"], ["broken"])})
    labels = analytics_refresh(resamples=50).data["labels"]
    assert labels["excluded"] == 1
    assert labels["designs"] == [{"design": broken.content_hash, "labels": ["broken"]}]
    moves = {row["figure"]: row for row in labels["moves"]}
    assert moves["duels"]["all"] == 6 and moves["duels"]["excluding"] == 5
    assert moves["duels"]["moved"] is True


def test_no_labels_exclude_nothing(make):
    _tournament(make)
    labels = analytics_refresh(resamples=50).data["labels"]
    assert labels == {"excluded": 0, "designs": [], "moves": []}

