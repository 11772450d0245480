"""Which designs human labels exclude from what is counted (analytics, flywheel, training sets).

A design is excluded when, on a label question of any queue, its adjudicated answer carries an
excluding label (broken, hint-leaks-answer) or, without an adjudication, more than half of the
annotators who answered that question for it chose such a label.
"""

from __future__ import annotations

from collections import defaultdict

from duels.annotation_defaults import EXCLUDING_LABELS
from duels.models import Adjudication, AnnotationQueue, Answer, QuestionKind


def _label_questions(queue: AnnotationQueue, labels: tuple[str, ...]) -> list[str]:
    return [q["key"] for q in queue.rubric.questions
            if q["kind"] in (QuestionKind.SINGLE, QuestionKind.MULTI)
            and set(q.get("labels", ())) & set(labels)]


def _labels_of(value) -> set[str]:
    if isinstance(value, list):
        return {str(item) for item in value}
    return {str(value)} if value is not None else set()


def designs_excluded_by_labels(
    *, labels: tuple[str, ...] = EXCLUDING_LABELS
) -> dict[str, list[str]]:
    """Content hash → the excluding labels that hold for it (adjudicated or majority)."""
    excluded: dict[str, set[str]] = defaultdict(set)
    wanted = set(labels)
    for queue in AnnotationQueue.objects.select_related("rubric").filter(kind="single"):
        keys = _label_questions(queue, labels)
        if not keys:
            continue
        settled = {(row.design, row.question): row.value for row in
                   Adjudication.objects.filter(queue=queue, question__in=keys)}
        votes: dict[tuple[str, str], list[set[str]]] = defaultdict(list)
        for design, values in Answer.objects.filter(queue=queue).values_list("design", "values"):
            for key in keys:
                if key in values:
                    votes[(design, key)].append(_labels_of(values[key]))
                elif any(q["key"] == key and q["kind"] == QuestionKind.MULTI
                         for q in queue.rubric.questions):
                    votes[(design, key)].append(set())  # no label ticked is an answer too
        for (design, _key), value in settled.items():
            excluded[design].update(_labels_of(value) & wanted)
        for (design, key), ballots in votes.items():
            if (design, key) in settled:
                continue
            for label in wanted:
                if sum(label in ballot for ballot in ballots) * 2 > len(ballots):
                    excluded[design].add(label)
    return {design: sorted(found) for design, found in excluded.items() if found}
