"""Which designs human labels exclude from what is counted (analytics, flywheel, training sets).

The rule (docs/annotating.md): on a label question of a single-design queue (a queue of designs,
not of episodes or steps), an excluding label
(broken, hint-leaks-answer) holds for a design once

- staff adjudicated that question for the design and the settled answer carries it, or
- the queue's overlap is met (at least `overlap` annotators answered the question for the
  design) and more than half of those answers tick it.

Until then — fewer answers than the overlap, or exactly half of them ticking it — the label is
*pending*: the design shows "label pending" and nothing is left out. A design is excluded when a
label holds for it in any queue; it is pending when a label is pending for it somewhere and
holds nowhere.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from duels.annotation_defaults import EXCLUDING_LABELS
from duels.models import Adjudication, AnnotationQueue, Answer, QuestionKind

HOLDS = "holds"
PENDING = "pending"


@dataclass(frozen=True)
class LabelVerdict:
    """One excluding label on one design in one queue: how many answers tick it, of how many
    (the overlap asks for `needed`), and whether it holds, is pending or was settled."""

    queue: str  # the queue's name
    design: str
    label: str
    ticked: int
    answers: int
    needed: int
    state: str  # HOLDS, PENDING or "" (decided against)
    settled: bool = False


@dataclass(frozen=True)
class LabelStates:
    """Design → the excluding labels that hold (`excluded`) or are still pending (`pending`),
    and every verdict behind them."""

    excluded: dict[str, list[str]] = field(default_factory=dict)
    pending: dict[str, list[str]] = field(default_factory=dict)
    verdicts: list[LabelVerdict] = field(default_factory=list)


def _label_questions(queue: AnnotationQueue, labels: tuple[str, ...]) -> list[dict]:
    return [q for q in queue.rubric.questions
            if q["kind"] in (QuestionKind.SINGLE, QuestionKind.MULTI)
            and set(q.get("labels", ())) & set(labels)]


def _labels_of(value) -> set[str]:
    if isinstance(value, list):
        return {str(item) for item in value}
    return {str(value)} if value is not None else set()


def _verdicts(queue: AnnotationQueue, questions: list[dict], labels: tuple[str, ...],
              answers: list[tuple[str, dict]],
              adjudications: list[tuple[str, str, object]]) -> list[LabelVerdict]:
    """The rule applied to one queue's answers [(design, values)] and adjudications
    [(design, question, value)]."""
    keys = {q["key"] for q in questions}
    settled = {(design, key): _labels_of(value) for design, key, value in adjudications
               if key in keys}
    ballots: dict[tuple[str, str], list[set[str]]] = defaultdict(list)
    for item, values in answers:
        for question in questions:
            key = question["key"]
            if key in values:
                ballots[(item, key)].append(_labels_of(values[key]))
            elif question["kind"] == QuestionKind.MULTI:
                ballots[(item, key)].append(set())  # no label ticked is an answer too
    verdicts = []
    for item, key in sorted(set(ballots) | set(settled)):
        votes = ballots.get((item, key), [])
        for label in sorted(set(labels)):
            ticked = sum(label in ballot for ballot in votes)
            common = {"queue": queue.name, "design": item, "label": label, "ticked": ticked,
                      "answers": len(votes), "needed": queue.overlap}
            if (item, key) in settled:
                if label in settled[(item, key)] or ticked:
                    state = HOLDS if label in settled[(item, key)] else ""
                    verdicts.append(LabelVerdict(**common, state=state, settled=True))
                continue
            if not ticked:
                continue
            if len(votes) < queue.overlap or ticked * 2 == len(votes):
                state = PENDING
            else:
                state = HOLDS if ticked * 2 > len(votes) else ""
            verdicts.append(LabelVerdict(**common, state=state))
    return verdicts


def _all_verdicts(queues: list[AnnotationQueue], labels: tuple[str, ...],
                  design: str | None) -> list[LabelVerdict]:
    """Verdicts of these queues (three queries whatever their number)."""
    # Labels on an episode or a step say nothing about a design as a whole: design queues only.
    asking = {queue.pk: (queue, _label_questions(queue, labels)) for queue in queues
              if not queue.is_pairwise and queue.item_kind == "design"}
    asking = {pk: pair for pk, pair in asking.items() if pair[1]}
    if not asking:
        return []
    answers = Answer.objects.filter(queue_id__in=list(asking))
    adjudications = Adjudication.objects.filter(queue_id__in=list(asking))
    if design is not None:
        answers, adjudications = answers.filter(design=design), adjudications.filter(design=design)
    answer_rows: dict[int, list] = defaultdict(list)
    for queue_id, item, values in answers.values_list("queue_id", "design", "values"):
        answer_rows[queue_id].append((item, values))
    settled_rows: dict[int, list] = defaultdict(list)
    for queue_id, item, key, value in adjudications.values_list("queue_id", "design",
                                                                "question", "value"):
        settled_rows[queue_id].append((item, key, value))
    verdicts = []
    for pk, (queue, questions) in asking.items():
        verdicts += _verdicts(queue, questions, labels, answer_rows[pk], settled_rows[pk])
    return verdicts


def label_verdicts(*, queue: AnnotationQueue,
                   labels: tuple[str, ...] = EXCLUDING_LABELS) -> list[LabelVerdict]:
    """Every excluding label some answer (or adjudication) gave a design of `queue`."""
    return _all_verdicts([queue], labels, None)


def design_label_states(*, labels: tuple[str, ...] = EXCLUDING_LABELS,
                        design: str | None = None) -> LabelStates:
    """Every design's (or the one `design`'s) excluding labels across the single-design
    queues, by the module's rule."""
    holds: dict[str, set[str]] = defaultdict(set)
    pending: dict[str, set[str]] = defaultdict(set)
    queues = list(AnnotationQueue.objects.select_related("rubric")
                  .filter(kind="single", item_kind="design"))
    verdicts = _all_verdicts(queues, labels, design)
    for verdict in verdicts:
        if verdict.state == HOLDS:
            holds[verdict.design].add(verdict.label)
        elif verdict.state == PENDING:
            pending[verdict.design].add(verdict.label)
    return LabelStates(
        excluded={item: sorted(found) for item, found in holds.items()},
        pending={item: sorted(found) for item, found in pending.items() if item not in holds},
        verdicts=verdicts,
    )


def designs_excluded_by_labels(
    *, labels: tuple[str, ...] = EXCLUDING_LABELS
) -> dict[str, list[str]]:
    """Content hash → the excluding labels that hold for it (adjudicated or a majority of a
    met overlap)."""
    return design_label_states(labels=labels).excluded
