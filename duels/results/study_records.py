"""A study's derived rows from its stored versions and field plays: its slots (each author's
lineage, ended) and its progress counters.

Beside the models because two writers need it and neither may reach into the other: the
importer (a study read from a file arrives with its versions and plays, never with the engine's
working rows) and the studies room.
"""

from __future__ import annotations

from django.db.models import Max, Q

from duels.models import DONE_STATUSES, Environment, Episode, SlotPhase, Status, Study, StudySlot


def study_slots_derive(*, study: Study) -> int:
    """Create the ended slots an imported study's versions imply (one per author and slot, at
    its highest revision) and store its progress; return how many slots were made."""
    slots = (Environment.objects.filter(study=study).exclude(author=None)
             .values("author_id", "slot").annotate(revision=Max("revision"))
             .order_by("author__name", "slot"))
    domains = dict(Environment.objects.filter(study=study, revision=0).values_list(
        "slot", "domain"))
    status = study.status if study.status in DONE_STATUSES else Status.FINISHED
    made = StudySlot.objects.bulk_create([
        StudySlot(study=study, author_id=row["author_id"], slot=row["slot"],
                  domain=domains.get(row["slot"], ""), position=position,
                  revision=row["revision"], phase=SlotPhase.DONE, status=status)
        for position, row in enumerate(slots)
    ], ignore_conflicts=True)
    plays = Episode.objects.filter(study=study)
    Study.objects.filter(pk=study.pk).update(
        slots_total=StudySlot.objects.filter(study=study).count(),
        slots_done=StudySlot.objects.filter(study=study, status__in=DONE_STATUSES).count(),
        episodes_total=plays.count(),
        episodes_done=plays.filter(Q(status__in=DONE_STATUSES)).count())
    return len(made)
