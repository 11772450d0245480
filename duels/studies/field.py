"""A version's field play, and a slot's and a study's progress around it.

Every version is played by every study player (the author too unless self-play is off) on the
version's benchmark seeds, in both conditions: one episode each, created in the commit that ends
the version's authoring, unique per (study, environment, solver, condition, seed). When the last
of them ends, the slot goes on to its next revision or ends; when every slot ended, the study does.
"""

from __future__ import annotations

import random

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from duels.models import (
    DONE_STATUSES,
    Condition,
    EndReason,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Player,
    SlotPhase,
    Status,
    Study,
    StudySlot,
)
from duels.models.environments import version_name
from duels.players import prompts
from duels.scoring import episode_decided

SEED_RANGE = 1_000_000  # benchmark seeds are drawn from 0 … SEED_RANGE − 1


def benchmark_seeds_draw(*, study: Study, author: Player, slot: str) -> list[int]:
    """The k seeds of a slot, drawn once (for its first version; revisions keep them): distinct,
    sorted, and the same however often the draw is repeated for this study and slot."""
    rng = random.Random(f"{study.uuid}:{author.uuid}:{slot}")
    return sorted(rng.sample(range(SEED_RANGE), study.seeds))


def field_solvers(*, study: Study, author_id: int) -> list[Player]:
    """Who plays an author's versions: every study player, the author only with self-play."""
    players = study.players.order_by("name")
    if not study.self_play:
        players = players.exclude(pk=author_id)
    return list(players)


def slot_version(*, slot: StudySlot, revision: int | None = None) -> Environment | None:
    """The slot's stored version of `revision` (its current one by default), or None."""
    return Environment.objects.filter(
        study_id=slot.study_id, author_id=slot.author_id, slot=slot.slot,
        revision=slot.revision if revision is None else revision).first()


def version_field_play_create(*, slot: StudySlot, version: Environment, hint: Hint,
                              owner: str) -> bool:
    """End the version's authoring: create its field plays and hand the slot to field play, in
    one commit, if `owner` still holds the slot's lease (False when it no longer did)."""
    study = slot.study
    rows = [
        Episode(study=study, environment=version, hint=condition_hint, solver=solver,
                seed=seed, condition=Condition.HINTED if condition_hint else Condition.UNHINTED,
                prompt_version=prompts.PROMPT_VERSION)
        for solver in field_solvers(study=study, author_id=slot.author_id)
        for seed in version.benchmark_seeds
        for condition_hint in (None, hint)
    ]
    with transaction.atomic():
        held = StudySlot.objects.filter(
            pk=slot.pk, status=Status.RUNNING, lease_owner=owner, phase=SlotPhase.AUTHORING,
            revision=version.revision,
        ).update(phase=SlotPhase.PLAYING, lease_owner="", lease_expires_at=None, error="")
        if held == 1:
            Episode.objects.bulk_create(rows, ignore_conflicts=True)
    return held == 1


def slot_lineage_end(*, slot: StudySlot, note: str, owner: str | None = None,
                     status: str = Status.FINISHED) -> bool:
    """End the slot's lineage (its last valid version stays final) with a note saying why;
    with `owner`, only while that driver still holds the slot's authoring lease."""
    rows = StudySlot.objects.filter(pk=slot.pk).exclude(status__in=DONE_STATUSES)
    if owner is not None:
        rows = rows.filter(status=Status.RUNNING, lease_owner=owner)
    return rows.update(phase=SlotPhase.DONE, status=status, note=note[:4000],
                       lease_owner="", lease_expires_at=None,
                       finished_at=timezone.now()) == 1


def slot_play_advance(*, slot_id: int) -> bool:
    """Once every field play of the slot's current version ended: go on to its next revision
    (while the study has hardening rounds left) or end the slot. True when it moved."""
    slot = StudySlot.objects.select_related("study").filter(
        pk=slot_id, phase=SlotPhase.PLAYING).first()
    if slot is None or slot.study.is_done:
        return False
    version = slot_version(slot=slot)
    if version is not None and Episode.objects.filter(
            study_id=slot.study_id, environment=version).exclude(
            status__in=DONE_STATUSES).exists():
        return False
    playing = StudySlot.objects.filter(pk=slot.pk, phase=SlotPhase.PLAYING,
                                       revision=slot.revision)
    if version is None or version.status != EnvironmentStatus.VALID:
        # Voided after its field play (proof after play): never revised, never final.
        name = version.version if version else version_name(slot=slot.slot,
                                                            revision=slot.revision)
        return slot_lineage_end(slot=slot, note=f"{name} was found invalid after its field "
                                                "play; the slot's hardening stops there.")
    if slot.revision < slot.study.harden_rounds:
        return playing.update(phase=SlotPhase.AUTHORING, revision=F("revision") + 1) == 1
    return playing.update(phase=SlotPhase.DONE, status=Status.FINISHED,
                          finished_at=timezone.now()) == 1


def study_slots_advance(*, study: Study) -> None:
    """Advance every slot whose field play ended (also after a worker died right before)."""
    open_plays = Episode.objects.filter(study=study).exclude(status__in=DONE_STATUSES)
    busy = set(open_plays.order_by().values_list("environment__author_id", "environment__slot")
               .distinct())
    for slot_id, author_id, name in StudySlot.objects.filter(
            study=study, phase=SlotPhase.PLAYING).values_list("pk", "author_id", "slot"):
        if (author_id, name) not in busy:
            slot_play_advance(slot_id=slot_id)


def study_progress_refresh(*, study: Study) -> None:
    """Store slots done and field plays scheduled, ended and running when any changed."""
    now = timezone.now()
    plays = Episode.objects.filter(study=study).aggregate(
        total=Count("pk"), done=Count("pk", filter=Q(status__in=DONE_STATUSES)),
        running=Count("pk", filter=Q(status=Status.RUNNING, lease_expires_at__gte=now)),
    )
    slots_done = StudySlot.objects.filter(study=study, status__in=DONE_STATUSES).count()
    figures = (slots_done, plays["total"], plays["done"], plays["running"])
    # Read before writing: most turns of a driver's loop change nothing, and an UPDATE waits
    # for the database's one writer even when it matches no row.
    stored = Study.objects.filter(pk=study.pk).values_list(
        "slots_done", "episodes_total", "episodes_done", "episodes_running").first()
    if stored is None or stored == figures:
        return
    Study.objects.filter(pk=study.pk).update(
        slots_done=slots_done, episodes_total=plays["total"], episodes_done=plays["done"],
        episodes_running=plays["running"])


def study_incomplete_plays(*, study: Study) -> int:
    """Field plays that ended without a result (infrastructure faults, cancellations)."""
    # Finished plays are all decided: only the other ends are read.
    ended = Episode.objects.filter(study=study, status__in=DONE_STATUSES).exclude(
        status=Status.FINISHED).values_list("status", "end_reason")
    return sum(1 for status, end_reason in ended
               if not episode_decided(status=status, end_reason=end_reason))


def study_finalize_if_complete(*, study: Study) -> bool:
    """Finish a running study whose slots have all ended, saying what was left incomplete."""
    if StudySlot.objects.filter(study=study).exclude(status__in=DONE_STATUSES).exists():
        return False
    incomplete = study_incomplete_plays(study=study)
    failed = StudySlot.objects.filter(study=study, status=Status.FAILED).count()
    notes = []
    if incomplete:
        notes.append(f"{incomplete} field play(s) ended without a result (infrastructure "
                     "faults or cancelled); every figure leaves them out")
    if failed:
        notes.append(f"{failed} slot(s) stopped by infrastructure faults while authoring")
    ended = Study.objects.filter(pk=study.pk, status=Status.RUNNING).update(
        status=Status.FINISHED, finished_at=timezone.now(), episodes_running=0,
        error="; ".join(notes))
    study_progress_refresh(study=study)
    return bool(ended)


def study_open_work_end(*, study: Study, status: str, reason: str) -> None:
    """End the study's unfinished slots and the field plays nobody holds (pending, or waiting
    for a worker); held plays end themselves after their current step."""
    now = timezone.now()
    StudySlot.objects.filter(study=study).exclude(status__in=DONE_STATUSES).update(
        phase=SlotPhase.DONE, status=status, note=reason[:4000], lease_owner="",
        lease_expires_at=None, finished_at=now)
    Episode.objects.filter(study=study).filter(
        Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now)
        | Q(status=Status.RUNNING, lease_owner="")
    ).update(status=Status.CANCELLED, end_reason=EndReason.CANCELLED, finished_at=now,
             lease_owner="", lease_expires_at=None)
