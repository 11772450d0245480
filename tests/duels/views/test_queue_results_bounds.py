"""A queue's results page costs the same at any queue size, and annotation is blind.

At the caps' largest size (a pairwise queue of 600 designs in 600 pairs judged 20 times each;
an agreement queue of 2,000 designs answered 20 times each on 30 questions of 30 labels) the
page answers within 2 s of CPU, the figures are computed once per revision of the answers (in
the background when the queue is that large) within 300 MB (the agreement's within 8 s of
CPU), and the next view reads them.
An annotator sees no one's answer to an item, nor the ranking made of them, before answering.
The machine these run on is shared: times are CPU times of this process, with the wall time
printed beside them.
"""

from __future__ import annotations

import os
import random
import time
import tracemalloc
from pathlib import Path

import pytest
from django.urls import reverse

from duels.models import AnnotationQueue, Answer, QueueResults
from duels.services.answers import answer_save
from duels.services.queue_results import (
    AGREEMENT,
    RANKING,
    queue_results,
    queue_results_compute,
)
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default
from tests.helpers.large_queues import agreement_queue_largest
from tests.helpers.web_server import memory_kib

pytestmark = pytest.mark.django_db

PAGE_CPU_SECONDS = 2.0
COMPUTE_BYTES = 300 * 2**20
# The background computation of the largest agreement queue's figures: about 4.5 s of CPU
# here, 13–14 s when each part summed its designs' coincidence matrices (benchmarks.md).
AGREEMENT_CPU_SECONDS = 8.0


def timed_get(client, url: str) -> tuple[str, float, float]:
    cpu, wall = time.process_time(), time.monotonic()
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), time.process_time() - cpu, time.monotonic() - wall


def traced(function, **kwargs):
    tracemalloc.start()
    cpu, wall = time.process_time(), time.monotonic()
    try:
        result = function(**kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak, time.process_time() - cpu, time.monotonic() - wall


def measured(function, **kwargs):
    """`traced`, untraced (tracing 10 million decoded labels would take 4× the CPU): the
    process's peak resident memory over its resident memory before, and the CPU and wall time."""
    before = memory_kib(os.getpid(), "VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from now
    cpu, wall = time.process_time(), time.monotonic()
    result = function(**kwargs)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    return result, (memory_kib(os.getpid(), "VmHWM") - before) * 1024, cpu, wall


def users(django_user_model, count: int):
    return [django_user_model.objects.create_user(f"annotator-{n:02d}", password="x" * 12)
            for n in range(count)]


@pytest.mark.slow
def test_the_largest_pairwise_queue_pages_within_bounds(client, staff, django_user_model,
                                                        monkeypatch):
    rng = random.Random(5)
    designs = [f"{n:064x}" for n in range(600)]
    order = designs[:]
    rng.shuffle(order)
    pairs = [[order[k], order[(k + 1) % 600]] for k in range(600)]
    people = users(django_user_model, 20)
    queue = AnnotationQueue.objects.create(
        name="Largest pairwise", rubric=rubric_default(), kind="pairwise",
        pair_question="rating", designs=designs, pairs=pairs, overlap=20, created_by=staff)
    queue.annotators.set(people)
    strength = {design: rng.gauss(0, 1) for design in designs}
    Answer.objects.bulk_create([
        Answer(queue=queue, rubric=queue.rubric, annotator=person, design=a, design_b=b,
               choice="a" if rng.random() < 1 / (1 + 2.718 ** (strength[b] - strength[a]))
               else "b")
        for a, b in pairs for person in people])
    enqueued = []
    monkeypatch.setattr("duels.services.queue_results.task_named",
                        lambda name: type("T", (), {"enqueue": lambda *a: enqueued.append(a)}))
    client.force_login(staff)
    url = reverse("duels:queue_results", args=[queue.uuid])
    first, cpu, wall = timed_get(client, url)
    print(f"pairwise first view: {cpu:.2f} s CPU ({wall:.2f} s wall)")
    assert cpu < PAGE_CPU_SECONDS and 'id="figures-coming"' in first and len(enqueued) == 1
    figures, peak, cpu, wall = traced(queue_results_compute, queue=queue, kind=RANKING)
    print(f"pairwise figures: {cpu:.2f} s CPU ({wall:.2f} s wall), peak {peak / 2**20:.0f} MB")
    assert peak < COMPUTE_BYTES and len(figures["rows"]) == 600
    second, cpu, wall = timed_get(client, url)
    print(f"pairwise second view: {cpu:.2f} s CPU ({wall:.2f} s wall)")
    assert cpu < PAGE_CPU_SECONDS and second.count('class="ranking-row"') == 600
    assert len(enqueued) == 1  # read from the stored figures, nothing recomputed


@pytest.mark.slow
def test_the_largest_agreement_queue_pages_within_bounds(client, staff, django_user_model,
                                                         monkeypatch):
    queue = agreement_queue_largest(created_by=staff, annotators=users(django_user_model, 20))
    enqueued = []
    monkeypatch.setattr("duels.services.queue_results.task_named",
                        lambda name: type("T", (), {"enqueue": lambda *a: enqueued.append(a)}))
    client.force_login(staff)
    url = reverse("duels:queue_results", args=[queue.uuid])
    first, cpu, wall = timed_get(client, url)
    print(f"agreement first view: {cpu:.2f} s CPU ({wall:.2f} s wall)")
    assert cpu < PAGE_CPU_SECONDS and 'id="figures-coming"' in first and len(enqueued) == 1
    figures, growth, cpu, wall = measured(queue_results_compute, queue=queue, kind=AGREEMENT)
    print(f"agreement figures (40,000 answers × 900 parts): {cpu:.2f} s CPU ({wall:.2f} s "
          f"wall), grew {growth / 2**20:.0f} MB, {figures['resamples']} resamples")
    assert cpu < AGREEMENT_CPU_SECONDS
    assert growth < COMPUTE_BYTES and len(figures["questions"]) == 900
    assert all(row["low"] is not None for row in figures["questions"])
    second, cpu, wall = timed_get(client, url)
    print(f"agreement second view: {cpu:.2f} s CPU ({wall:.2f} s wall)")
    assert cpu < PAGE_CPU_SECONDS and second.count('class="agreement-row"') == 900
    assert len(enqueued) == 1


def test_a_small_queue_is_computed_once_per_revision(staff, owner, teammate, make):
    for title in ("First design", "Second design"):
        make.environment(title=title)
    queue = queue_create(user=staff, name="Small", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=[owner, teammate], overlap=2)
    answer_save(user=owner, queue=queue, index=0, values={"rating": 4, "labels": ["broken"]})
    figures, current = queue_results(queue=queue, kind=AGREEMENT)
    assert current and figures["answers"] == 1
    stored = QueueResults.objects.get(queue=queue, kind=AGREEMENT)
    assert queue_results(queue=queue, kind=AGREEMENT)[0] == figures
    assert QueueResults.objects.get(pk=stored.pk).computed_at == stored.computed_at
    answer_save(user=teammate, queue=queue, index=0, values={"rating": 2, "labels": []})
    figures, current = queue_results(queue=queue, kind=AGREEMENT)
    assert current and figures["answers"] == 2


def test_an_annotator_sees_no_answer_to_an_item_before_answering_it(client, staff, owner,
                                                                   teammate, make,
                                                                   django_user_model):
    third = django_user_model.objects.create_user("third", password="third-pass-123")
    for title in ("First design", "Second design"):
        make.environment(title=title)
    queue = queue_create(user=staff, name="Blind", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=[owner, teammate, third],
                         overlap=3)
    # Item 0: teammate and third disagree; owner has not answered it. Item 1: all three did.
    answer_save(user=teammate, queue=queue, index=0, values={"rating": 1, "labels": []})
    answer_save(user=third, queue=queue, index=0, values={"rating": 5, "labels": ["broken"]})
    for user, rating in ((owner, 2), (teammate, 4), (third, 3)):
        answer_save(user=user, queue=queue, index=1, values={"rating": rating, "labels": []})
    unanswered, answered = queue.designs[0], queue.designs[1]
    url = reverse("duels:queue_results", args=[queue.uuid])
    client.force_login(owner)
    page = client.get(url).content.decode()
    assert f'data-design="{answered}"' in page and f'data-design="{unanswered}"' not in page
    assert 'id="disputed-hidden"' in page
    client.force_login(staff)
    page = client.get(url).content.decode()
    assert f'data-design="{answered}"' in page and f'data-design="{unanswered}"' in page
    # Once the owner answers item 0, its answers show.
    answer_save(user=owner, queue=queue, index=0, values={"rating": 3, "labels": []})
    client.force_login(owner)
    assert f'data-design="{unanswered}"' in client.get(url).content.decode()


def test_the_ranking_waits_until_the_annotator_has_answered_their_pairs(client, staff, owner,
                                                                       teammate, make):
    for title in ("A", "B", "C"):
        make.environment(title=title)
    queue = queue_create(user=staff, name="Blind pairs", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=[owner, teammate], overlap=2,
                         kind="pairwise", pair_question="rating")
    for index in range(len(queue.pairs)):
        answer_save(user=teammate, queue=queue, index=index, choice="a")
    url = reverse("duels:queue_results", args=[queue.uuid])
    client.force_login(owner)
    page = client.get(url).content.decode()
    assert 'id="ranking-hidden"' in page and 'class="ranking-row"' not in page
    for index in range(len(queue.pairs)):
        answer_save(user=owner, queue=queue, index=index, choice="b")
    assert 'class="ranking-row"' in client.get(url).content.decode()
    client.force_login(staff)
    assert 'class="ranking-row"' in client.get(url).content.decode()
