"""The study's figures as last computed, and whether they still describe its data.

The page and the API answer from the figures stored on the study (`Study.figures`), never by
computing them in a request: a study of 12,960 field plays takes tens of seconds to recompute
with its intervals. The stored figures carry the fingerprint of the data they were computed from;
while the data has moved on, a reader gets them with `current` False and a background refresh is
queued (one at a time per study).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta

from django.db import DatabaseError
from django.db.models import Count, Max, Q
from django.utils import timezone

from duels.engine.task_registry import task_named
from duels.models import DONE_STATUSES, EnvironmentStatus, Episode, Status, Study

logger = logging.getLogger(__name__)

REFRESH_TASK = "study_figures_refresh"
# Refresh requests for one study within this many seconds share one task.
DEBOUNCE_SECONDS = 5
# The shape of the stored figures: raised when a change adds figures, so figures stored by an
# older EnvDuels count as stale and are recomputed (2: the headline and rank ranges).
FIGURES_SHAPE = 2
# A running study's figures are recomputed at most this often.
RUNNING_REFRESH_SECONDS = 30


def study_figures_fingerprint(*, study: Study) -> str:
    """What the figures would be computed from now: the study's ended plays (how many, the
    latest end), its versions (how many, how many valid, the newest), its status and its
    players' sizes."""
    plays = Episode.objects.filter(study=study, status__in=DONE_STATUSES).aggregate(
        count=Count("pk"), last=Max("finished_at"))
    versions = study.environments.aggregate(
        count=Count("pk"), valid=Count("pk", filter=Q(status=EnvironmentStatus.VALID)),
        last=Max("pk"))
    status = Study.objects.filter(pk=study.pk).values_list("status", flat=True).first()
    # The players' sizes feed a finding: entering one makes the figures stale.
    sizes = sorted(study.players.values_list("pk", "parameters_b"))
    text = json.dumps([plays["count"], str(plays["last"]), versions["count"],
                       versions["valid"], versions["last"], status, FIGURES_SHAPE, sizes])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def study_figures_pending(*, study: Study) -> bool:
    """True when a refresh of this study's figures is queued or running."""
    from django_tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(
        task_path=task_named(REFRESH_TASK).module_path,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
        args_kwargs__kwargs__study_uuid=str(study.uuid),
    ).exists()


def study_figures_request(*, study: Study, delay_seconds: float = DEBOUNCE_SECONDS) -> bool:
    """Queue a background refresh of the study's figures unless one is queued or running;
    True when one was queued. While the study runs, refreshes come at most every
    RUNNING_REFRESH_SECONDS (a big study's recomputation takes tens of seconds of CPU). Never
    raises a database error to the caller."""
    try:
        if study_figures_pending(study=study):
            return False
        run_after = timezone.now() + timedelta(seconds=delay_seconds)
        row = Study.objects.filter(pk=study.pk).values_list("status",
                                                            "figures_computed_at").first()
        if row and row[0] == Status.RUNNING and row[1] is not None:
            run_after = max(run_after, row[1] + timedelta(seconds=RUNNING_REFRESH_SECONDS))
        task_named(REFRESH_TASK).using(run_after=run_after).enqueue(study_uuid=str(study.uuid))
    except DatabaseError:
        logger.exception("could not queue a refresh of study %s's figures", study.uuid)
        return False
    return True


def _head(study: Study) -> tuple:
    """(when the stored figures were computed, whether they are current); queues a refresh when
    they are stale or missing."""
    stored = Study.objects.filter(pk=study.pk).values_list(
        "figures_computed_at", "figures_fingerprint").first()
    computed_at, fingerprint = stored if stored else (None, "")
    current = computed_at is not None and fingerprint == study_figures_fingerprint(study=study)
    if not current:
        study_figures_request(study=study)
    return computed_at, current


def study_figures_state(*, study: Study) -> tuple[str | None, bool]:
    """When the stored figures were computed (ISO 8601, None before the first computation) and
    whether they are current, without reading them; a stale or missing one queues a refresh.
    The study page's live poll asks this."""
    computed_at, current = _head(study)
    return (computed_at.isoformat() if computed_at else None), current


# The parsed figures of the studies read last, per process: {study id: (computed at, figures)}.
# A big study's figures are a megabyte of JSON; a page reads them again only once newer ones
# are stored.
_parsed: dict[int, tuple] = {}
KEPT_PARSED = 8


def study_figures_stored(*, study: Study) -> tuple[dict | None, bool]:
    """The stored figures (None before the first computation; shared by this process's readers:
    never change them) and whether they are current; a stale or missing one queues a
    background refresh."""
    computed_at, current = _head(study)
    if computed_at is None:
        return None, False
    kept = _parsed.get(study.pk)
    if kept is not None and kept[0] == computed_at:
        return kept[1], current
    figures = Study.objects.filter(pk=study.pk).values_list("figures", flat=True).first()
    if len(_parsed) >= KEPT_PARSED:
        _parsed.clear()
    _parsed[study.pk] = (computed_at, figures)
    return figures, current
