"""Writes for annotation queues: freeze a selection of items, its annotators and overlap.

A queue's items are chosen once, when it is created, and kept in that order, so progress and
agreement refer to a fixed set: designs (content hashes) by the environments list's filters, a
tournament (every design its duels played) or a curated training set; episodes by the episode
list's facets; steps by a transcript search (its words and the same facets).
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
    ItemKind,
    QuestionKind,
    QueueKind,
    Rubric,
    Tournament,
)
from duels.selectors.environments import EnvironmentFilters, environment_list
from duels.selectors.episode_list import EpisodeFilters, episode_list
from duels.selectors.queue_items import item_key_step
from duels.selectors.search import SearchQueryError, transcripts_search
from duels.selectors.training_sets import TrainingSetFilters, training_set_select
from duels.services.annotation_access import STAFF_ONLY, queue_can_manage

MAX_QUEUE_DESIGNS = 2000
MAX_PAIRS = 600
MAX_OVERLAP = 20
MAX_GUIDELINES = 5000
# Where a queue's items come from, and what they are.
SOURCES = {"environments": ItemKind.DESIGN, "tournament": ItemKind.DESIGN,
           "study": ItemKind.DESIGN, "panel": ItemKind.DESIGN,
           "training_set": ItemKind.DESIGN, "episodes": ItemKind.EPISODE,
           "steps": ItemKind.STEP}


class QueueError(Exception):
    """A queue could not be written; the message says what to change."""


@dataclass(frozen=True)
class QueueSelection:
    """Which designs a queue holds: one source and its filters."""

    source: str = "environments"
    environments: EnvironmentFilters = field(default_factory=EnvironmentFilters)
    tournament: UUID | None = None
    study: UUID | None = None  # every version of the study (each a design of its own)
    panel: UUID | None = None  # every version frozen in the panel
    training_set: TrainingSetFilters = field(default_factory=TrainingSetFilters)
    episodes: EpisodeFilters = field(default_factory=EpisodeFilters)
    search: str = ""  # the words a step queue's steps hold
    described: dict = field(default_factory=dict)  # the filters as given, shown on the page

    @property
    def item_kind(self) -> str:
        return SOURCES.get(self.source, ItemKind.DESIGN)


def queue_select_designs(*, selection: QueueSelection) -> list[str]:
    """The selected items' keys (content hashes, episode uuids or steps), each once, in the
    source's order."""
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
    elif selection.source in ("study", "panel"):
        hashes = _versions_of(selection)
    elif selection.source == "training_set":
        hashes = [item.content_hash for item in training_set_select(filters=selection.training_set)]
    elif selection.source == "episodes":
        hashes = [str(uuid) for uuid in episode_list(filters=selection.episodes)
                  .values_list("uuid", flat=True)[: MAX_QUEUE_DESIGNS + 1]]
    elif selection.source == "steps":
        hashes = _search_steps(selection)
    else:
        raise QueueError(f"The source is one of {', '.join(SOURCES)}.")
    items = list(dict.fromkeys(hashes))
    if len(items) > MAX_QUEUE_DESIGNS:
        noun = SOURCES[selection.source].label
        raise QueueError(f"The selection holds more than {MAX_QUEUE_DESIGNS} {noun}; narrow it.")
    return items


def _versions_of(selection: QueueSelection) -> list[str]:
    """The designs of a study's versions (slot and revision order) or a panel's (its order)."""
    from duels.models import Panel, PanelEntry, Study

    if selection.source == "study":
        if selection.study is None or not Study.objects.filter(uuid=selection.study).exists():
            raise QueueError("Choose a study that exists.")
        rows = (Environment.objects.filter(study__uuid=selection.study)
                .order_by("author__name", "slot", "revision", "pk")
                .values_list("content_hash", flat=True))
    else:
        if selection.panel is None or not Panel.objects.filter(uuid=selection.panel).exists():
            raise QueueError("Choose a panel that exists.")
        rows = (PanelEntry.objects.filter(panel__uuid=selection.panel).order_by("position")
                .values_list("environment__content_hash", flat=True))
    return list(rows[: MAX_QUEUE_DESIGNS * 4])


def _search_steps(selection: QueueSelection) -> list[str]:
    """The steps a transcript search finds (newest first), up to one more than a queue holds."""
    keys: list[str] = []
    before = None
    try:
        while len(keys) <= MAX_QUEUE_DESIGNS:
            page = transcripts_search(query=selection.search, before=before,
                                      filters=selection.episodes, limit=200)
            keys += [item_key_step(episode=hit.step.episode.uuid, index=hit.step.index)
                     for hit in page.hits]
            if page.next_before is None:
                break
            before = page.next_before
    except SearchQueryError as exc:
        raise QueueError(f"Steps: {exc}") from None
    return keys


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
    pair_question: str = "", guidelines: str = "",
) -> AnnotationQueue:
    """A queue of the selected items (designs, episodes or steps); staff only."""
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
    guidelines = guidelines.replace("\r\n", "\n").strip()
    if len(guidelines) > MAX_GUIDELINES:
        raise QueueError(f"Guidelines are limited to {MAX_GUIDELINES:,} characters.")
    item_kind = selection.item_kind
    if kind == QueueKind.PAIRWISE and item_kind != ItemKind.DESIGN:
        raise QueueError("A pairwise queue compares designs: choose designs from the "
                         "environments list, a tournament or a training set.")
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
        raise QueueError(f"The selection holds no {ItemKind(item_kind).label}." if not designs
                         else "A pairwise queue needs at least two designs.")
    with transaction.atomic():
        queue = AnnotationQueue.objects.create(
            name=name, rubric=rubric, kind=kind, pair_question=pair_question, overlap=overlap,
            selection={"source": selection.source, **selection.described}, designs=designs,
            item_kind=item_kind, guidelines=guidelines, created_by=user)
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
