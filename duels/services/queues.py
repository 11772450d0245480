"""Writes for annotation queues: freeze a selection of designs, its annotators and overlap.

A queue's designs are chosen once, when it is created, by the environments list's filters, a
tournament (every design its duels played) or a curated training set, and kept as content
hashes in that order, so progress and agreement refer to a fixed set of items.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from uuid import UUID

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from duels.models import (
    AnnotationQueue,
    Duel,
    Environment,
    QuestionKind,
    QueueKind,
    Rubric,
    Tournament,
)
from duels.selectors.environments import EnvironmentFilters, environment_list
from duels.selectors.training_sets import TrainingSetFilters, training_set_select
from duels.services.annotation_access import STAFF_ONLY, queue_can_manage

MAX_QUEUE_DESIGNS = 2000
MAX_PAIRS = 600
MAX_OVERLAP = 20
SOURCES = ("environments", "tournament", "training_set")


class QueueError(Exception):
    """A queue could not be written; the message says what to change."""


@dataclass(frozen=True)
class QueueSelection:
    """Which designs a queue holds: one source and its filters."""

    source: str = "environments"
    environments: EnvironmentFilters = field(default_factory=EnvironmentFilters)
    tournament: UUID | None = None
    training_set: TrainingSetFilters = field(default_factory=TrainingSetFilters)
    described: dict = field(default_factory=dict)  # the filters as given, shown on the page


def queue_select_designs(*, selection: QueueSelection) -> list[str]:
    """Content hashes of the selected designs, each once, in the source's order."""
    if selection.source == "environments":
        hashes = environment_list(filters=selection.environments).values_list(
            "content_hash", flat=True)[: MAX_QUEUE_DESIGNS + 1]
    elif selection.source == "tournament":
        if selection.tournament is None or not Tournament.objects.filter(
                uuid=selection.tournament).exists():
            raise QueueError("Choose a tournament that exists.")
        duels = Duel.objects.filter(tournament__uuid=selection.tournament)
        rows = Environment.objects.filter(
            pk__in=[*duels.values_list("env_a", flat=True), *duels.values_list("env_b", flat=True)]
        ).order_by("created_at", "pk").values_list("content_hash", flat=True)
        hashes = list(rows[: MAX_QUEUE_DESIGNS * 4])
    elif selection.source == "training_set":
        hashes = [item.content_hash for item in training_set_select(filters=selection.training_set)]
    else:
        raise QueueError(f"The source is one of {', '.join(SOURCES)}.")
    designs = list(dict.fromkeys(hashes))
    if len(designs) > MAX_QUEUE_DESIGNS:
        raise QueueError(f"The selection holds more than {MAX_QUEUE_DESIGNS} designs; narrow it.")
    return designs


def queue_pairs(*, designs: list[str], seed: int) -> list[list[str]]:
    """Every pair of designs (sides in a seeded random order), or a seeded sample of
    `MAX_PAIRS` of them that still shows every design."""
    rng = random.Random(seed)
    pairs = [list(pair) for pair in itertools.combinations(designs, 2)]
    if len(pairs) > MAX_PAIRS:
        # A shuffled cycle first, so every design is compared, then random pairs up to the cap.
        order = designs[:]
        rng.shuffle(order)
        chosen = {tuple(sorted((order[i], order[(i + 1) % len(order)])))
                  for i in range(len(order))}
        rest = [tuple(pair) for pair in pairs if tuple(sorted(pair)) not in chosen]
        rng.shuffle(rest)
        pairs = [list(pair) for pair in [*chosen, *rest][:MAX_PAIRS]]
    for pair in pairs:
        if rng.random() < 0.5:
            pair.reverse()
    rng.shuffle(pairs)
    return pairs


def queue_create(
    *, user: AbstractBaseUser, name: str, rubric: Rubric, selection: QueueSelection,
    annotators: list[AbstractBaseUser], overlap: int = 1, kind: str = QueueKind.SINGLE,
    pair_question: str = "",
) -> AnnotationQueue:
    """A queue of the selected designs; staff only."""
    if not queue_can_manage(user=user):
        raise QueueError(STAFF_ONLY)
    name = " ".join(name.split())
    if not 1 <= len(name) <= 120:
        raise QueueError("Name the queue (1–120 characters).")
    if kind not in QueueKind.values:
        raise QueueError("A queue is single or pairwise.")
    if not annotators:
        raise QueueError("Choose at least one annotator.")
    if not 1 <= overlap <= min(MAX_OVERLAP, len(annotators)):
        raise QueueError(f"The overlap (annotations per item) is 1–{MAX_OVERLAP} and at most "
                         f"the number of annotators ({len(annotators)}).")
    if kind == QueueKind.PAIRWISE:
        question = rubric.question(pair_question)
        if question is None:
            raise QueueError("A pairwise queue is judged on one of its rubric's questions.")
        if question["kind"] == QuestionKind.TEXT:
            raise QueueError("A pairwise question needs an answer to compare, not free text.")
    else:
        pair_question = ""
    designs = queue_select_designs(selection=selection)
    minimum = 2 if kind == QueueKind.PAIRWISE else 1
    if len(designs) < minimum:
        raise QueueError("The selection holds no designs" if not designs else
                         "A pairwise queue needs at least two designs.")
    with transaction.atomic():
        queue = AnnotationQueue.objects.create(
            name=name, rubric=rubric, kind=kind, pair_question=pair_question, overlap=overlap,
            selection={"source": selection.source, **selection.described}, designs=designs,
            created_by=user)
        if kind == QueueKind.PAIRWISE:
            queue.pairs = queue_pairs(designs=designs, seed=queue.uuid.int % 2**32)
            queue.save(update_fields=["pairs"])
        queue.annotators.set(annotators)
    return queue


def queue_set_annotators(*, user: AbstractBaseUser, queue: AnnotationQueue,
                         usernames: list[str]) -> None:
    """Replace the queue's annotators by these accounts (staff only)."""
    if not queue_can_manage(user=user):
        raise QueueError(STAFF_ONLY)
    users = list(get_user_model().objects.filter(username__in=usernames, is_active=True))
    missing = sorted(set(usernames) - {u.get_username() for u in users})
    if missing:
        raise QueueError(f"No active account named {', '.join(missing)}.")
    queue.annotators.set(users)
