"""An agreement queue at the caps' largest size, stored in bulk: 2,000 designs answered by 20
annotators each on 30 several-label questions of 30 labels, every label ticked with
probability 0.3 (40,000 answers, 36 million label answers, some 140 MB of JSON)."""

from __future__ import annotations

import numpy as np

from duels.models import AnnotationQueue, Answer, Rubric

DESIGNS, ANNOTATORS, QUESTIONS, LABELS = 2000, 20, 30, 30
TICKED = 0.3


def _label_lists(ticks: np.ndarray, labels: list[str]) -> list[list[list[str]]]:
    """Each answer's ticked labels per question, from its (questions × labels) ticks. Labels go
    by tens: a question's list is made of three looked-up runs, not one test per label."""
    runs = [[[labels[start + bit] for bit in range(10) if mask >> bit & 1]
             for mask in range(1024)] for start in range(0, len(labels), 10)]
    weights = 1 << np.arange(10)
    masks = (ticks.reshape(*ticks.shape[:2], -1, 10) * weights).sum(axis=-1).tolist()
    return [[[label for run, mask in zip(runs, question, strict=True) for label in run[mask]]
             for question in answer] for answer in masks]


def agreement_queue_largest(*, created_by, annotators: list, seed: int = 6) -> AnnotationQueue:
    """The queue, its rubric and its answers (`annotators`: 20 users)."""
    labels = [f"label-{n:02d}" for n in range(LABELS)]
    keys = [f"q{n:02d}" for n in range(QUESTIONS)]
    rubric = Rubric.objects.create(name="Thirty by thirty", questions=[
        {"key": key, "kind": "multi", "prompt": f"Question {n}", "labels": labels}
        for n, key in enumerate(keys)])
    designs = [f"{n:064x}" for n in range(DESIGNS)]
    queue = AnnotationQueue.objects.create(name="Largest agreement", rubric=rubric,
                                           designs=designs, overlap=ANNOTATORS,
                                           created_by=created_by)
    queue.annotators.set(annotators)
    rng = np.random.default_rng(seed)
    for start in range(0, DESIGNS, 200):
        ticks = rng.random((200 * ANNOTATORS, QUESTIONS, LABELS)) < TICKED
        answers = iter(_label_lists(ticks, labels))
        Answer.objects.bulk_create([
            Answer(queue=queue, rubric=rubric, annotator=person, design=design,
                   values=dict(zip(keys, next(answers), strict=True)))
            for design in designs[start:start + 200] for person in annotators],
            batch_size=1000)
    return queue
